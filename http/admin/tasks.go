package admin

import (
	"context"
	"net/http"

	"oficina/schema/tasks"
	"oficina/streams"
)

// taskRoutes read, change and delete tasks as the dashboard does; writes
// record task.updated and task.deleted as dashboard writes.
func (s *Server) taskRoutes() {
	c := Prefix + "/companies/{company}/tasks/{id}"
	s.mux.HandleFunc("GET "+c, s.company(false, getTask))
	s.mux.HandleFunc("PATCH "+c, s.company(false, updateTask))
	s.mux.HandleFunc("DELETE "+c, s.company(false, deleteTask))
}

func getTask(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	t, err := tasks.Get(ctx, w.Tx, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, t.View(w.At), nil
}

func updateTask(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	in, err := decode[tasks.TaskUpdate](r)
	if err != nil {
		return 0, nil, err
	}
	t, err := tasks.Update(ctx, w, r.PathValue("id"), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, t.View(w.At), nil
}

func deleteTask(ctx context.Context, w *streams.Write, r *http.Request) (int, any, error) {
	t, err := tasks.Delete(ctx, w, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, deleted{Object: "task", ID: t.ID, Deleted: true}, nil
}
