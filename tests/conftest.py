"""Shared test settings: hypothesis runs derandomized, so every run draws the same examples."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "book",
    derandomize=True,
    deadline=None,
    database=None,
    max_examples=25,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("book")
