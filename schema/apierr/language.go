package apierr

import (
	"golang.org/x/text/language"
)

// Languages are the message languages, the default first.
var Languages = []string{"pt-BR", "en", "es"}

var matcher = language.NewMatcher([]language.Tag{
	language.BrazilianPortuguese, language.English, language.Spanish,
})

// Negotiate picks the message language for an Accept-Language header:
// pt-BR unless the caller prefers en or es. Malformed headers fall back to
// the default instead of failing the request.
func Negotiate(acceptLanguage string) string {
	if acceptLanguage == "" {
		return Languages[0]
	}
	tags, _, err := language.ParseAcceptLanguage(acceptLanguage)
	if err != nil || len(tags) == 0 {
		return Languages[0]
	}
	_, idx, conf := matcher.Match(tags...)
	if conf == language.No {
		return Languages[0]
	}
	return Languages[idx]
}
