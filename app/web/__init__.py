"""The HTTP application: create_app, middleware, request bodies, the pages' CSP, uvicorn."""
