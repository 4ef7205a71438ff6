// Google's map for the day (when the server has a browser key): the script is
// loaded once per page, the map created once, markers and the route line
// updated in place, like the Leaflet map in map.js.

import { fmtClock } from "./planner/ui.js";

let loading = null;

function loadGoogleMaps(key) {
  if (window.google && window.google.maps) return Promise.resolve(window.google.maps);
  if (loading) return loading;
  loading = new Promise((resolve, reject) => {
    const cb = `__waylineMaps${Date.now()}`;
    window[cb] = () => {
      delete window[cb];
      resolve(window.google.maps);
    };
    const script = document.createElement("script");
    script.src = `https://maps.googleapis.com/maps/api/js?key=${encodeURIComponent(key)}&callback=${cb}&loading=async`;
    script.async = true;
    script.addEventListener("error", () => {
      loading = null;
      reject(new Error("Google Maps could not load"));
    });
    document.head.append(script);
    setTimeout(() => {
      if (window.google && window.google.maps) return;
      loading = null; // a later map may try again
      reject(new Error("Google Maps took too long"));
    }, 10000);
  });
  return loading;
}

export async function createGoogleMap(canvas, key) {
  const maps = await loadGoogleMaps(key);
  const map = new maps.Map(canvas, { mapTypeControl: false, streetViewControl: false, fullscreenControl: false });
  const markers = new Map(); // stopId -> marker
  const route = new maps.Polyline({ map, path: [], strokeColor: "#0f766e", strokeOpacity: 0.85, strokeWeight: 4 });
  return {
    draw(located) {
      const keep = new Set();
      for (const { stop, n } of located) {
        keep.add(stop.id);
        const position = { lat: stop.lat, lng: stop.lng };
        const title = `${n}. ${stop.name} (${fmtClock(stop.startMinutes)})`;
        const marker = markers.get(stop.id);
        if (marker) {
          marker.setPosition(position);
          marker.setLabel(String(n));
          marker.setTitle(title);
        } else {
          markers.set(stop.id, new maps.Marker({ position, map, label: String(n), title }));
        }
      }
      for (const [id, marker] of markers) {
        if (!keep.has(id)) {
          marker.setMap(null);
          markers.delete(id);
        }
      }
      route.setPath(located.map(({ stop }) => ({ lat: stop.lat, lng: stop.lng })));
    },
    fit(located) {
      if (located.length === 1) {
        map.setCenter({ lat: located[0].stop.lat, lng: located[0].stop.lng });
        map.setZoom(15);
        return;
      }
      const bounds = new maps.LatLngBounds();
      for (const { stop } of located) bounds.extend({ lat: stop.lat, lng: stop.lng });
      map.fitBounds(bounds, 40);
    },
    resize() {}, // Google's map follows its box by itself
    destroy() {
      for (const marker of markers.values()) marker.setMap(null);
      route.setMap(null);
    },
  };
}
