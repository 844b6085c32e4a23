package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/tasks"
)

// taskRoutes read, change and delete tasks as the dashboard does; writes
// record task.updated and task.deleted as dashboard writes.
func (s *Server) taskRoutes() {
	c := Prefix + "/companies/{company}/tasks/{id}"
	s.mux.HandleFunc("GET "+c, s.company(false, getTask))
	s.mux.HandleFunc("PATCH "+c, s.company(false, updateTask))
	s.mux.HandleFunc("DELETE "+c, s.company(false, deleteTask))
}

func getTask(ctx context.Context, tx bun.Tx, r *http.Request, _ string, now time.Time) (int, any, error) {
	t, err := tasks.Get(ctx, tx, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, t.View(now), nil
}

func updateTask(ctx context.Context, tx bun.Tx, r *http.Request, companyID string, now time.Time) (int, any, error) {
	in, err := decode[tasks.TaskUpdate](r)
	if err != nil {
		return 0, nil, err
	}
	t, err := tasks.Update(ctx, tx, dashboard(companyID, now), r.PathValue("id"), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, t.View(now), nil
}

func deleteTask(ctx context.Context, tx bun.Tx, r *http.Request, companyID string, now time.Time) (int, any, error) {
	t, err := tasks.Delete(ctx, tx, dashboard(companyID, now), r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, deleted{Object: "task", ID: t.ID, Deleted: true}, nil
}
