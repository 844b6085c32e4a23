package dispatch

// CompanyView is companyView for the package's external tests.
type CompanyView = companyView
