// The day's map, created once per page and updated when the day's stops
// change (never rebuilt per render): Leaflet (served from our own origin by
// the xstatic-leaflet package) with OpenStreetMap tiles, or the deployer's
// tiles (`mapTilesUrl`, `mapAttribution` in /api/config); Google's map when a
// browser key is set. Numbered markers match the timeline's numbers, the
// day's route is one line, and the view fits the day when its places change.
// When tiles cannot load (offline, a blocked tile host) the page falls back to
// the SVG schematic drawn from the stops' coordinates.

import { h, fmtMinutes, fmtClock } from "./planner/ui.js";
import { sig } from "./planner/keyed.js";
import { createGoogleMap } from "./gmap.js";

const LEAFLET = "/vendor/leaflet/leaflet-src.esm.js";
const TILE_WAIT_MS = 10000;
let tilesFailed = false; // once tiles failed, this page draws schematics

export function createDayMap(box, store) {
  const config = store.app.session.config;
  const count = h("span", { class: "muted" });
  const details = h("details", { class: "map-details card", open: localStorage.getItem("wayline.mapOpen") !== "0" },
    h("summary", null, h("span", null, "Map of the day"), count));
  const canvas = h("div", { class: "map-canvas", role: "region", "aria-label": "Map of the day's stops", hidden: true });
  const schematicBox = h("div", { class: "map-fallback", hidden: true });
  const message = h("p", { class: "muted map-empty", hidden: true });
  details.append(canvas, schematicBox, message);
  box.append(details);

  let engine = null; // the live map, once created
  let starting = null;
  let shown = null; // {day, located}
  let drawnSig = null;
  let placesSig = null;
  let needsFit = false;

  details.addEventListener("toggle", () => {
    localStorage.setItem("wayline.mapOpen", details.open ? "1" : "0");
    if (details.open) redraw();
  });
  // The centre changes width (the panel opens, the window turns): tell the map.
  const resized = new ResizeObserver(() => {
    if (!engine || !canvas.clientWidth) return;
    engine.resize();
    if (needsFit) fit();
  });
  resized.observe(canvas);

  function update(day) {
    const located = day.stops
      .map((stop, i) => ({ stop, n: i + 1 }))
      .filter(({ stop }) => typeof stop.lat === "number" && typeof stop.lng === "number");
    count.textContent = ` · ${located.length} of ${day.stops.length} stops located`;
    const next = sig(day.id, located.map(({ stop, n }) => [stop.id, stop.lat, stop.lng, stop.name, stop.kind, stop.startMinutes, n]),
      day.legs.map((l) => [l.fromStopId, l.toStopId, l.mode, l.source, l.durationS]));
    if (next === drawnSig) return;
    drawnSig = next;
    const places = sig(day.id, located.map(({ stop }) => [stop.id, stop.lat, stop.lng]));
    if (places !== placesSig) needsFit = true;
    placesSig = places;
    shown = { day, located };
    redraw();
  }

  function redraw() {
    if (!shown) return;
    const { day, located } = shown;
    message.hidden = located.length > 0;
    if (!located.length) {
      message.textContent = day.stops.length ? "Add a location to a stop to see it here." : "Stops with a location appear here.";
      canvas.hidden = true;
      schematicBox.hidden = true;
      return;
    }
    if (tilesFailed) return drawSchematic();   // tiles, or Google's script, could not load
    canvas.hidden = false;
    schematicBox.hidden = true;
    if (!engine) return start();
    engine.draw(located, day);
    if (needsFit) fit();
  }

  function fit() {
    if (!engine || !shown || !canvas.clientWidth) return;
    engine.fit(shown.located);
    needsFit = false;
  }

  function start() {
    if (starting) return;
    const create = config.googleMapsBrowserKey
      ? () => createGoogleMap(canvas, config.googleMapsBrowserKey)
      : () => createLeafletMap(canvas, config, tilesDown);
    starting = create()
      .then((map) => {
        engine = map;
        redraw();
      })
      .catch(() => tilesDown());
  }

  function tilesDown() {
    tilesFailed = true;
    if (engine) engine.destroy();
    engine = null;
    redraw();
  }

  function drawSchematic() {
    canvas.hidden = true;
    schematicBox.hidden = false;
    const { day, located } = shown;
    const width = Math.max(260, Math.min(900, (box.clientWidth || 360) - 26));
    schematicBox.replaceChildren(schematic(day, located.map(({ stop }) => stop), width, located.length < 2 ? 140 : width < 420 ? 220 : 250));
  }

  return {
    update,
    destroy() {
      resized.disconnect();
      if (engine) engine.destroy();
    },
  };
}

// -- Leaflet ------------------------------------------------------------------

async function createLeafletMap(canvas, config, onTilesFailed) {
  const L = await import(LEAFLET);
  const map = L.map(canvas, { scrollWheelZoom: false, zoomSnap: 0.5 });
  map.attributionControl.setPrefix(false);
  const tiles = L.tileLayer(config.mapTilesUrl, { attribution: config.mapAttribution, maxZoom: 19 });
  // No tile at all loaded (all failed, or none came in time): the schematic takes over.
  let loaded = 0;
  let failed = 0;
  let timer = null;
  // Later, not inside Leaflet's own event (removing the map there breaks it).
  const giveUp = () => {
    if (loaded === 0) setTimeout(onTilesFailed, 0);
  };
  tiles.on("tileloadstart", () => {
    if (timer === null) timer = setTimeout(giveUp, TILE_WAIT_MS);
  });
  tiles.on("tileload", () => {
    loaded += 1;
    clearTimeout(timer);
  });
  tiles.on("tileerror", () => { failed += 1; });
  tiles.on("load", () => {
    if (failed && !loaded) giveUp();
  });
  tiles.addTo(map);
  const markers = new Map(); // stopId -> marker
  const route = L.polyline([], { className: "map-route", weight: 4, opacity: 0.85, interactive: false }).addTo(map);

  return {
    draw(located) {
      const keep = new Set();
      for (const { stop, n } of located) {
        keep.add(stop.id);
        const title = `${n}. ${stop.name} (${fmtClock(stop.startMinutes)})`;
        const icon = L.divIcon({
          className: `map-pin kind-${stop.kind}`, html: h("span", { class: "map-pin-num" }, String(n)),
          iconSize: [28, 28], iconAnchor: [14, 14],
        });
        let marker = markers.get(stop.id);
        if (!marker) {
          marker = L.marker([stop.lat, stop.lng], { icon, title, alt: title, keyboard: true, riseOnHover: true }).addTo(map);
          marker.bindTooltip(h("span", null, title), { direction: "top", offset: [0, -14] });
          markers.set(stop.id, marker);
        } else {
          marker.options.title = title;
          marker.setLatLng([stop.lat, stop.lng]);
          marker.setIcon(icon);
          marker.setTooltipContent(h("span", null, title));
        }
      }
      for (const [id, marker] of markers) {
        if (!keep.has(id)) {
          marker.remove();
          markers.delete(id);
        }
      }
      route.setLatLngs(located.map(({ stop }) => [stop.lat, stop.lng]));
    },
    fit(located) {
      const points = located.map(({ stop }) => [stop.lat, stop.lng]);
      if (points.length === 1) map.setView(points[0], 15);
      else map.fitBounds(points, { padding: [28, 28], maxZoom: 16 });
    },
    resize() {
      map.invalidateSize();
    },
    destroy() {
      clearTimeout(timer);
      map.remove();
    },
  };
}

// -- the schematic (no tiles) ---------------------------------------------------

const SVG = "http://www.w3.org/2000/svg";

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
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

  const legs = new Map(day.legs.map((l) => [`${l.fromStopId}>${l.toStopId}`, l]));
  const stopsLayer = s("g");
  for (let i = 1; i < day.stops.length; i++) {
    const a = pos.get(day.stops[i - 1].id);
    const b = pos.get(day.stops[i].id);
    if (!a || !b) continue;
    const leg = legs.get(`${day.stops[i - 1].id}>${day.stops[i].id}`);
    const line = s("line", { x1: a[0], y1: a[1], x2: b[0], y2: b[1], class: `map-leg mode-${leg ? leg.mode : "none"}${leg && leg.source === "estimate" ? " estimate" : ""}` });
    if (leg) line.append(s("title", {}, `${leg.mode} ${fmtMinutes(Math.round(leg.durationS / 60))}`));
    svg.append(line);
  }
  // Names sit beside the markers, stepped clear of each other; travel times
  // are in the timeline (and the lines' tooltips), not over the lines.
  const placed = [];
  day.stops.forEach((st, i) => {
    const p = pos.get(st.id);
    if (!p) return;
    const g = s("g", { class: `map-stop kind-${st.kind}` });
    g.append(s("title", {}, `${i + 1}. ${st.name} (${fmtClock(st.startMinutes)})`));
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
    stopsLayer.append(g);
  });
  svg.append(stopsLayer);
  const legend = h("p", { class: "map-legend muted" }, "Map tiles could not load, so this is a sketch: positions are to scale, dashed lines are estimated travel.");
  return h("figure", { class: "schematic-wrap" }, svg, legend);
}
