// The map of a day. With a Google Maps browser key (from /api/config) it is a
// real Google map with numbered markers; otherwise a drawn SVG schematic of
// the stops and legs (positions projected from lat/lng, no tiles, no network).

import { h, clear, fmtMinutes } from "./planner/ui.js";

const SVG = "http://www.w3.org/2000/svg";
let mapsPromise = null;

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

export function renderMap(box, store, day) {
  clear(box);
  const located = day.stops.filter((st) => typeof st.lat === "number" && typeof st.lng === "number");
  const key = store.app.session.config.googleMapsBrowserKey;
  const open = localStorage.getItem("wayline.mapOpen") !== "0";
  const details = h("details", { class: "map-details card", open: open ? true : null },
    h("summary", null, h("span", null, "Map of the day"), h("span", { class: "muted" }, ` · ${located.length} of ${day.stops.length} stops located`)));
  details.addEventListener("toggle", () => localStorage.setItem("wayline.mapOpen", details.open ? "1" : "0"));
  box.append(details);
  if (!located.length) {
    details.append(h("p", { class: "muted map-empty" }, day.stops.length ? "Add a location to a stop to see it here." : "Stops with a location appear here."));
    return;
  }
  if (key) {
    const canvas = h("div", { class: "gmap", role: "region", "aria-label": "Google map of the day's stops" });
    details.append(canvas);
    googleMap(canvas, key, located).catch(() => {
      clear(canvas);
      canvas.replaceWith(schematic(day, located, 360, 240));
    });
  } else {
    // Drawn at the box's own width so labels keep their size.
    const width = Math.max(280, Math.min(900, (box.clientWidth || 360) - 26));
    details.append(schematic(day, located, width, located.length < 2 ? 140 : width < 420 ? 220 : 250));
  }
}

function schematic(day, located, W, H) {
  const pad = 36;
  const midLat = located.reduce((a, st) => a + st.lat, 0) / located.length;
  const kx = Math.cos((midLat * Math.PI) / 180);
  const xs = located.map((st) => st.lng * kx);
  const ys = located.map((st) => st.lat);
  const [minX, maxX, minY, maxY] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const scale = Math.min((W - 2 * pad - 60) / Math.max(maxX - minX, 1e-4), (H - 2 * pad) / Math.max(maxY - minY, 1e-4));
  const ox = (W - (maxX - minX) * scale) / 2;
  const oy = (H - (maxY - minY) * scale) / 2;
  const pos = new Map(located.map((st, i) => [st.id, [ox + (xs[i] - minX) * scale, H - (oy + (ys[i] - minY) * scale)]]));

  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "schematic", role: "img", "aria-label": `Schematic map of day ${day.position + 1}: ${located.map((st) => st.name).join(", then ")}` });
  svg.append(s("rect", { x: 0, y: 0, width: W, height: H, rx: 12, class: "map-bg" }));
  // a faint grid so it reads as a map
  for (let gx = 40; gx < W; gx += 40) svg.append(s("line", { x1: gx, y1: 0, x2: gx, y2: H, class: "map-grid" }));
  for (let gy = 40; gy < H; gy += 40) svg.append(s("line", { x1: 0, y1: gy, x2: W, y2: gy, class: "map-grid" }));

  const placed = []; // label boxes already drawn, to step stop labels clear of them
  const legs = new Map(day.legs.map((l) => [`${l.fromStopId}>${l.toStopId}`, l]));
  for (let i = 1; i < day.stops.length; i++) {
    const a = pos.get(day.stops[i - 1].id);
    const b = pos.get(day.stops[i].id);
    if (!a || !b) continue;
    const leg = legs.get(`${day.stops[i - 1].id}>${day.stops[i].id}`);
    svg.append(s("line", { x1: a[0], y1: a[1], x2: b[0], y2: b[1], class: `map-leg mode-${leg ? leg.mode : "none"}${leg && leg.source === "estimate" ? " estimate" : ""}` }));
    // Minutes on the leg only where the line is long enough to hold them.
    if (leg && Math.hypot(b[0] - a[0], b[1] - a[1]) > 90) {
      const mx = (a[0] + b[0]) / 2;
      const my = (a[1] + b[1]) / 2;
      const text = `${leg.mode} ${fmtMinutes(Math.round(leg.durationS / 60))}`;
      placed.push({ x0: mx - text.length * 3, x1: mx + text.length * 3, y: my - 5 });
      svg.append(s("text", { x: mx, y: my - 5, class: "map-leg-label", "text-anchor": "middle" }, text));
    }
  }
  day.stops.forEach((st, i) => {
    const p = pos.get(st.id);
    if (!p) return;
    const g = s("g", { class: `map-stop kind-${st.kind}` });
    g.append(s("title", {}, `${i + 1}. ${st.name} (${st.startTime})`));
    g.append(s("circle", { cx: p[0], cy: p[1], r: 11 }));
    g.append(s("text", { x: p[0], y: p[1] + 4, "text-anchor": "middle", class: "map-num" }, String(i + 1)));
    const right = p[0] < W - 130;
    const room = Math.max(10, Math.floor((right ? W - p[0] - 22 : p[0] - 22) / 6.4));
    const label = st.name.length > room ? `${st.name.slice(0, room - 1)}…` : st.name;
    const width = label.length * 6.4;
    const x0 = right ? p[0] + 15 : p[0] - 15 - width;
    let y = p[1] + 4;
    while (placed.some((b) => Math.abs(b.y - y) < 13 && x0 < b.x1 && x0 + width > b.x0) && y < H - 6) y += 13;
    placed.push({ x0, x1: x0 + width, y });
    g.append(s("text", { x: right ? p[0] + 15 : p[0] - 15, y, "text-anchor": right ? "start" : "end", class: "map-label" }, label));
    svg.append(g);
  });
  const legend = h("p", { class: "map-legend muted" }, "Schematic (no map key set): positions are to scale, dashed lines are estimated travel.");
  return h("figure", { class: "schematic-wrap" }, svg, legend);
}

function loadGoogleMaps(key) {
  if (window.google && window.google.maps) return Promise.resolve(window.google.maps);
  if (mapsPromise) return mapsPromise;
  mapsPromise = new Promise((resolve, reject) => {
    const cb = `__waylineMaps${Date.now()}`;
    window[cb] = () => {
      delete window[cb];
      resolve(window.google.maps);
    };
    const script = document.createElement("script");
    script.src = `https://maps.googleapis.com/maps/api/js?key=${encodeURIComponent(key)}&callback=${cb}&loading=async`;
    script.async = true;
    script.onerror = () => {
      mapsPromise = null;
      reject(new Error("Google Maps could not load"));
    };
    document.head.append(script);
    setTimeout(() => reject(new Error("Google Maps took too long")), 10000);
  });
  return mapsPromise;
}

async function googleMap(canvas, key, located) {
  const maps = await loadGoogleMaps(key);
  const map = new maps.Map(canvas, { mapTypeControl: false, streetViewControl: false, fullscreenControl: false });
  const bounds = new maps.LatLngBounds();
  const path = [];
  located.forEach((st, i) => {
    const position = { lat: st.lat, lng: st.lng };
    bounds.extend(position);
    path.push(position);
    new maps.Marker({ position, map, label: String(i + 1), title: `${st.name} (${st.startTime})` });
  });
  new maps.Polyline({ path, map, strokeColor: "#0f766e", strokeOpacity: 0.8, strokeWeight: 3 });
  if (located.length === 1) {
    map.setCenter(path[0]);
    map.setZoom(15);
  } else {
    map.fitBounds(bounds, 40);
  }
}
