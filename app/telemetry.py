"""Optional OpenTelemetry spans: one per agent turn, one per model call.

Off unless both an OTLP endpoint is configured (`OTEL_EXPORTER_OTLP_ENDPOINT`
or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, see app/settings.py) and the `otel`
extra is installed (`pip install 'wayline[otel]'`). Off, `Telemetry()` is a
no-op and `opentelemetry` is never imported. Spans carry correlation ids,
model names and token counts only: never text, keys or preferences.

Spans use the app's own TracerProvider (not the global one), so tests can
give an app an in-memory exporter (`Telemetry.with_exporter`) without
touching process-wide state.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager, nullcontext
from typing import Any
from collections.abc import Iterator

log = logging.getLogger("wayline")


def _attributes(values: dict[str, Any]) -> dict[str, Any]:
    """OpenTelemetry takes str/bool/int/float attributes; None means 'not known'."""
    return {k: v for k, v in values.items() if isinstance(v, (str, bool, int, float))}


class Span:
    """A span that is not made current: for async generators, whose context
    cannot be reset safely from another frame. `end()` exactly once."""

    def __init__(self, span: Any = None) -> None:
        self._span = span

    def set(self, **attributes: Any) -> None:
        if self._span is not None:
            self._span.set_attributes(_attributes(attributes))

    def end(self, error: str | None = None) -> None:
        if self._span is None:
            return
        if error:
            from opentelemetry.trace import Status, StatusCode

            self._span.set_status(Status(StatusCode.ERROR, error))
        self._span.end()


class Telemetry:
    """The app's tracer, or nothing (the default)."""

    def __init__(self, tracer: Any = None, provider: Any = None) -> None:
        self._tracer, self._provider = tracer, provider

    @property
    def enabled(self) -> bool:
        return self._tracer is not None

    def span(self, name: str, **attributes: Any):
        """`with telemetry.span("wayline.agent.turn", ...) as span:` the span is
        current inside (model calls nest under it); the span is None when off."""
        if self._tracer is None:
            return nullcontext(None)
        return self._current(name, attributes)

    @contextmanager
    def _current(self, name: str, attributes: dict[str, Any]) -> Iterator[Any]:
        with self._tracer.start_as_current_span(name, attributes=_attributes(attributes)) as span:
            yield span

    def start(self, name: str, **attributes: Any) -> Span:
        """A child of the current span (if any), not made current."""
        if self._tracer is None:
            return Span()
        return Span(self._tracer.start_span(name, attributes=_attributes(attributes)))

    def shutdown(self) -> None:
        if self._provider is not None:
            self._provider.shutdown()

    @classmethod
    def with_exporter(cls, exporter: Any) -> Telemetry:
        """Spans exported synchronously to `exporter` (tests: InMemorySpanExporter)."""
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor

        provider = TracerProvider(resource=_resource())
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        return cls(provider.get_tracer("wayline"), provider)


def _resource() -> Any:
    from opentelemetry.sdk.resources import Resource

    return Resource.create({"service.name": "wayline"})


def from_settings(settings: Any) -> Telemetry:
    """Spans batched to the configured OTLP/HTTP endpoint, or the no-op when
    none is configured or the extra is not installed (said once in the log)."""
    endpoint = settings.otel_traces_endpoint
    if not endpoint:
        return Telemetry()
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        log.warning("OpenTelemetry endpoint set, but the otel extra is not installed "
                    "(pip install 'wayline[otel]'): no spans are exported")
        return Telemetry()
    provider = TracerProvider(resource=_resource())
    # Headers (e.g. an auth token) come from OTEL_EXPORTER_OTLP_HEADERS, read by the exporter itself.
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    return Telemetry(provider.get_tracer("wayline"), provider)
