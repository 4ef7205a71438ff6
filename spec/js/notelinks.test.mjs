// public/planner/notelinks.js: the uploads a stop's note links, the note
// without one of them, and who is offered Remove.
// Run: node --test spec/js/notelinks.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { noteUploads, withoutUpload, mediaIdOf, mayRemove, removeRefusal, NOT_YOURS } from "../../public/planner/notelinks.js";

const ORIGIN = "https://wayline.example";
const TRIP = "0123456789abcdef";
const PHOTO = `/api/uploads/trips/${TRIP}/aaaaaaaaaaaaaaaa.png`;
const PDF = `/api/uploads/trips/${TRIP}/bbbbbbbbbbbbbbbb.pdf`;
const uploads = (text) => noteUploads(text, TRIP, ORIGIN);
const without = (text, path) => withoutUpload(text, path, TRIP, ORIGIN);

test("finds this trip's uploads, once each, in order; images marked", () => {
  const note = `Tickets: ![tickets.png](${PHOTO})\n[menu.pdf](${PDF}) and again ![again](${ORIGIN}${PHOTO})\n`;
  assert.deepEqual(uploads(note), [
    { path: PHOTO, label: "tickets.png", image: true },
    { path: PDF, label: "menu.pdf", image: false },
  ]);
});

test("web links, other trips' files and addresses that climb out are not uploads", () => {
  const other = "/api/uploads/trips/fedcba9876543210/aaaaaaaaaaaaaaaa.png";
  const note = `[site](https://example.org/a.png) ![x](${other}) ![y](/api/uploads/../trips/${TRIP}/live) [z](${PHOTO}?v=1)`;
  assert.deepEqual(uploads(note), []);
  assert.deepEqual(uploads(""), []);
  assert.deepEqual(uploads(null), []);
});

test("a link split over two lines is not one (the renderer reads a line at a time)", () => {
  assert.deepEqual(uploads(`[tick\nets](${PHOTO})`), []);
});

test("a link on its own line goes with its line; the rest is kept as typed", () => {
  const note = `Bring cash.\n![tickets.png](${PHOTO})\n[menu.pdf](${PDF})\n`;
  assert.equal(without(note, PHOTO), `Bring cash.\n[menu.pdf](${PDF})\n`);
  assert.equal(without(`![tickets.png](${PHOTO})\n`, PHOTO), "");
  assert.equal(without(`  ![tickets.png](${PHOTO})  \nafter`, PHOTO), "after");
});

test("inside a sentence the link goes with one space, never leaving two", () => {
  assert.equal(without(`Our tickets: ![tickets.png](${PHOTO})`, PHOTO), "Our tickets:");
  assert.equal(without(`See [the photo](${PHOTO}) before we go.`, PHOTO), "See before we go.");
  assert.equal(without(`![t](${PHOTO}) at the door`, PHOTO), "at the door");
  assert.equal(without(`Photo:![t](${PHOTO}), then lunch`, PHOTO), "Photo:, then lunch");
});

test("every link to the file goes, whichever way it was written; others stay", () => {
  const note = `a ![one](${PHOTO}) b [two](${ORIGIN}${PHOTO}) c [menu](${PDF})\n![three](${PHOTO}) ![three](${PHOTO})`;
  assert.equal(without(note, PHOTO), `a b c [menu](${PDF})`);
  assert.equal(without(note, "/api/uploads/trips/0123456789abcdef/cccccccccccccccc.png"), note);
});

test("a note without the file is the same text", () => {
  const note = "Just words.\n\nTwo paragraphs, **bold**.\n";
  assert.equal(without(note, PHOTO), note);
});

test("the upload's id is its stored name without the extension", () => {
  assert.equal(mediaIdOf(PHOTO), "aaaaaaaaaaaaaaaa");
  assert.equal(mediaIdOf(PDF), "bbbbbbbbbbbbbbbb");
});

test("Remove is offered as the API allows", () => {
  assert.equal(mayRemove("owner", "me", "someone"), true);
  assert.equal(mayRemove("editor", "me", "me"), true);
  assert.equal(mayRemove("editor", "me", "someone"), false);
  assert.equal(mayRemove("editor", "me", undefined), true);   // not known: try, the server decides
  assert.equal(mayRemove("viewer", "me", "me"), false);
  assert.equal(mayRemove(undefined, "me", "me"), false);
});

test("a refused Remove reads in plain words, never a code", () => {
  const err = (status, code, message) => ({ status, code, message });
  assert.equal(removeRefusal(err(403, "forbidden", "Only the member who uploaded this file, or an owner, can delete it."), "editor"),
    NOT_YOURS);
  assert.equal(NOT_YOURS, "Only the member who uploaded this file or an owner can remove it.");
  const demoted = "Only editors and owners can do this; you are a viewer on this trip.";
  assert.equal(removeRefusal(err(403, "forbidden", demoted), "viewer"), demoted);
  assert.equal(removeRefusal(err(502, "http_502", "The server answered 502. Please try again."), "owner"),
    "The file could not be removed. Please try again.");
  const offline = "Could not reach Wayline. Check your connection and try again.";
  assert.equal(removeRefusal(err(0, "network", offline), "owner"), offline);
  assert.equal(removeRefusal(null, "owner"), "The file could not be removed. Please try again.");
});
