// Package server is Kairos's HTTP retrieval service: a versioned native API (/v1/...), a
// drop-in replacement for WikiChat's retriever (POST /search, both request shapes), and the
// operations endpoints a production deployment needs (health, readiness, Prometheus metrics,
// OpenAPI, hot reload), for one index or several (collections routed by path, as WikiChat's
// corpus_id endpoints are). Each collection is a live index (rerank/live), which opens the
// index with its models, decides the default mode, refuses what it cannot serve and reloads
// under load; the server routes, validates, bounds and answers. Its tests run live indexes
// over fake engines (live.New), and cmd opens the real ones.
package server
