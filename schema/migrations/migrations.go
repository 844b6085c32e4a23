// Package migrations holds the embedded SQL migrations of the database. They
// run as the database owner (oficina migrate, or at start in dev); the
// service itself connects as the oficina_app role they create. They change
// tables, indexes, policies and roles; a function's current body is not
// here but in sql/<function>.sql of the package that calls it, applied
// after these (decision 0020), even where an older migration defined it.
package migrations

import (
	"embed"
	"fmt"

	"github.com/uptrace/bun/migrate"
)

//go:embed *.sql
var files embed.FS

// All returns the migrations in order.
func All() (*migrate.Migrations, error) {
	m := migrate.NewMigrations()
	if err := m.Discover(files); err != nil {
		return nil, fmt.Errorf("migrations: discover: %w", err)
	}
	return m, nil
}
