from conftest import signup


def test_healthz_and_config(client):
    assert client.get("/healthz").json() == {"ok": True}
    data = client.get("/api/config").json()["data"]
    assert set(data) == {"googleMapsBrowserKey", "aiEnabled", "placesEnabled", "limits"}


def test_signup_me_signout(client):
    user = signup(client, "alice")
    assert client.get("/api/auth/me").json()["data"]["user"]["username"] == "alice"
    assert client.post("/api/auth/signout", json={}).status_code == 200
    assert client.get("/api/auth/me").status_code == 401
