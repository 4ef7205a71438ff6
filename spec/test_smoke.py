from helpers import signup


def test_healthz_and_config(client):
    assert client.get("/healthz").json() == {"ok": True}
    data = client.get("/api/config").json()["data"]
    assert set(data) == {"googleMapsBrowserKey", "aiEnabled", "placesEnabled", "placesProvider", "mapTilesUrl",
                         "mapAttribution", "currencyExponents", "limits", "offlineOps", "memberOps"}


def test_signup_me_signout(client):
    signup(client, "alice")
    assert client.get("/api/auth/me").json()["data"]["user"]["username"] == "alice"
    assert client.post("/api/auth/signout", json={}).status_code == 200
    # Signed out, the probe answers "nobody" (a clean page load logs no error); other routes still say 401.
    r = client.get("/api/auth/me")
    assert r.status_code == 200 and r.json()["data"] == {"user": None, "isAdmin": False}
    assert client.get("/api/trips").status_code == 401


def test_the_page_and_invite_paths_serve_the_app(client):
    for path in ("/", "/invite/some-token"):
        r = client.get(path)
        assert r.status_code == 200 and "text/html" in r.headers["content-type"]
        assert "<script" in r.text
        assert r.headers["x-frame-options"] == "DENY" and r.headers["x-content-type-options"] == "nosniff"


def test_leaflet_is_served_from_our_own_origin(client):
    js = client.get("/vendor/leaflet/leaflet-src.esm.js")
    assert js.status_code == 200 and "javascript" in js.headers["content-type"]
    assert "export {" in js.text
    css = client.get("/vendor/leaflet/leaflet.css")
    assert css.status_code == 200 and ".leaflet-container" in css.text
    assert client.get("/vendor/leaflet/../../__init__.py").status_code == 404
