"""Outside providers: who answers place search, details and routes (maps.py: Google or
OpenStreetMap), weather, street view, the answer caches they share and the one outbound client."""
