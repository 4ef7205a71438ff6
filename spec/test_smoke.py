from helpers import signup


def test_healthz_and_config(client):
    assert client.get("/healthz").json() == {"ok": True}
    data = client.get("/api/config").json()["data"]
    assert set(data) == {"googleMapsBrowserKey", "aiEnabled", "placesEnabled", "limits"}


def test_signup_me_signout(client):
    signup(client, "alice")
    assert client.get("/api/auth/me").json()["data"]["user"]["username"] == "alice"
    assert client.post("/api/auth/signout", json={}).status_code == 200
    assert client.get("/api/auth/me").status_code == 401


def test_the_page_and_invite_paths_serve_the_app(client):
    for path in ("/", "/invite/some-token"):
        r = client.get(path)
        assert r.status_code == 200 and "text/html" in r.headers["content-type"]
        assert "<script" in r.text
        assert r.headers["x-frame-options"] == "DENY" and r.headers["x-content-type-options"] == "nosniff"
