package envelope

import (
	"encoding/json"
	"fmt"
)

// Thin is body, an envelope Build made, as an endpoint with the thin
// payload receives it (issue 26 item 3): the same id, type, timestamp and
// changed_fields, with data.object reduced to its object and id, and no
// object_truncated (the object is always short). The full envelope stays
// in the log, for GET /events/{id}. A body whose object has no id (ping)
// is already thin and comes back as it is. The result depends on body
// alone, so every attempt of a delivery signs the same bytes.
func Thin(body []byte) ([]byte, error) {
	var ev Event
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, fmt.Errorf("envelope: thin: %w", err)
	}
	var id struct {
		Object string `json:"object"`
		ID     string `json:"id"`
	}
	if err := json.Unmarshal(ev.Data.Object, &id); err != nil {
		return nil, fmt.Errorf("envelope: thin: object: %w", err)
	}
	if id.ID == "" {
		return body, nil
	}
	obj, err := json.Marshal(id)
	if err != nil {
		return nil, fmt.Errorf("envelope: thin: %w", err)
	}
	ev.Data.Object, ev.Data.ObjectTruncated = obj, false
	out, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("envelope: thin: %w", err)
	}
	return out, nil
}
