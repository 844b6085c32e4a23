package apiclient

import (
	"context"
	"net/http"
)

// BearerKey authenticates every request with an API key (part 2.2).
func BearerKey(key string) RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+key)
		return nil
	}
}
