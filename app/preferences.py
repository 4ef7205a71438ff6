"""Private defaults and the trip's shared choices.

Your defaults (food, price, usual transport) are yours alone and reused on
every trip. The trip's shared choices (transport, avoided modes, longest
walk, pace, interests, budget) override your defaults on that trip and never
change them. Food never lives on a trip. Allergy text never goes to a model:
`for_model()` says only whether the person has allergies.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .db import Database
from .ids import utcnow

Mode = Literal["walk", "transit", "drive", "bicycle"]
Pace = Literal["relaxed", "normal", "packed"]
MODES: tuple[str, ...] = ("walk", "transit", "drive", "bicycle")
# A mode in words, as the preferences form names it ("avoids public transport"), and a leg made in it.
MODE_NAMES = {"walk": "walking", "transit": "public transport", "drive": "driving", "bicycle": "cycling"}
MODE_BY = {"walk": "on foot", "transit": "by public transport", "drive": "by car", "bicycle": "by bicycle"}

# How many stops a day holds at each pace, and the default visit length.
PACE_STOPS = {"relaxed": 4, "normal": 6, "packed": 8}
PACE_VISIT_MIN = {"relaxed": 120, "normal": 90, "packed": 60}


class UserPreferences(BaseModel):
    cuisines: list[str] = Field(default_factory=list, max_length=20)
    dietary: list[str] = Field(default_factory=list, max_length=20)
    allergies: str = Field(default="", max_length=500)
    maxPriceLevel: int | None = Field(default=None, ge=1, le=4)
    transport: Mode = "transit"

    @field_validator("cuisines", "dietary")
    @classmethod
    def _clean(cls, values: list[str]) -> list[str]:
        return [v.strip()[:40] for v in values if v and v.strip()]


class SaveUserPreferences(UserPreferences):
    """PUT /api/users/preferences: a misspelt field is a 422 naming it, not
    silently dropped (stored rows are read with the lenient model above).
    `saved`, which GET answers, may come back and is ignored."""

    model_config = ConfigDict(extra="forbid")
    saved: bool | None = Field(default=None, exclude=True)


class TripPreferences(BaseModel):
    transport: Mode = "transit"
    avoidModes: list[Mode] = Field(default_factory=list)
    longestWalkM: int = Field(default=1500, ge=0, le=50_000)
    fewerTransfers: bool = False
    pace: Pace = "normal"
    interests: list[str] = Field(default_factory=list, max_length=20)
    budget: Literal["low", "moderate", "high"] | None = None

    @field_validator("interests")
    @classmethod
    def _clean(cls, values: list[str]) -> list[str]:
        return [v.strip()[:40] for v in values if v and v.strip()]

    @field_validator("avoidModes")
    @classmethod
    def _unique(cls, values: list[str]) -> list[str]:
        return list(dict.fromkeys(values))


class EffectivePreferences(BaseModel):
    """What planning uses for one person on one trip."""

    user: UserPreferences
    trip: TripPreferences
    saved: bool  # the person has saved their defaults at least once

    def for_model(self) -> dict:
        """Soft preferences to steer a model. Allergy text is never included."""
        return {
            "cuisines": self.user.cuisines,
            "dietaryNeeds": self.user.dietary,
            "hasAllergies": bool(self.user.allergies.strip()),
            "maxPriceLevel": self.user.maxPriceLevel,
            "transport": self.trip.transport,
            "avoidModes": self.trip.avoidModes,
            "longestWalkM": self.trip.longestWalkM,
            "fewerTransfers": self.trip.fewerTransfers,
            "pace": self.trip.pace,
            "interests": self.trip.interests,
            "budget": self.trip.budget,
        }


async def load_user(db: Database, user_id: str) -> tuple[UserPreferences, bool]:
    raw = await db.fetchval("SELECT prefs_json FROM user_preferences WHERE user_id = ?", (user_id,))
    if raw is None:
        return UserPreferences(), False
    return UserPreferences.model_validate_json(raw), True


async def save_user(db: Database, user_id: str, prefs: UserPreferences) -> None:
    await db.write(lambda tx: tx.execute(
        "INSERT INTO user_preferences (user_id, prefs_json, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT (user_id) DO UPDATE SET prefs_json = excluded.prefs_json, updated_at = excluded.updated_at",
        (user_id, prefs.model_dump_json(), utcnow()),
    ))


def parse_trip(raw: str | None) -> TripPreferences:
    return TripPreferences() if raw is None else TripPreferences.model_validate_json(raw)


async def effective(db: Database, user_id: str, trip: TripPreferences, trip_chose: bool) -> EffectivePreferences:
    """A member's private defaults with the trip's shared choices (`trip`: the
    trip in memory's `prefs`, the one source; `trip_chose`: its `prefs_set`).
    Until the trip has chosen, the member's usual transport stands in."""
    user, saved = await load_user(db, user_id)
    if not trip_chose:
        trip = trip.model_copy(update={"transport": user.transport})
    return EffectivePreferences(user=user, trip=trip, saved=saved)


def dumps(prefs: BaseModel) -> str:
    return json.dumps(prefs.model_dump(), separators=(",", ":"))
