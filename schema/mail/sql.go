package mail

import (
	"embed"

	"oficina/schema/db"
)

//go:embed sql/*.sql
var sqlFiles embed.FS

// Functions are the SQL functions this package calls, one file each under
// sql/, which db.Migrate applies after the migrations (decision 0020).
func Functions() db.Functions { return db.Functions{Package: "schema/mail", FS: sqlFiles} }
