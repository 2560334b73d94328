package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The OpenAPI document parses, is served, and names every route the
// handler serves (and only those).
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	routes := map[string][]string{
		"/v1/kv/{key}":       {"get", "put", "delete"},
		"/v1/multi/{parent}": {"get", "delete"},
		"/v1/execute":        {"post"},
		"/v1/login":          {"post"},
		"/v1/store":          {"get"},
		"/v1/scan":           {"get"},
		"/openapi.json":      {"get"},
	}
	for path, methods := range routes {
		for _, m := range methods {
			if _, ok := doc.Paths[path][m]; !ok {
				t.Errorf("openapi.json lacks %s %s", strings.ToUpper(m), path)
			}
		}
	}
	if len(doc.Paths) != len(routes) {
		t.Errorf("openapi.json documents %d paths, the handler serves %d", len(doc.Paths), len(routes))
	}
	h := New(nil, 1<<20)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != 200 || rec.Body.Len() != len(openAPI) {
		t.Errorf("GET /openapi.json: %d, %d bytes; want 200 and the document", rec.Code, rec.Body.Len())
	}
}
