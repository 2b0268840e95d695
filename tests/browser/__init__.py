"""Browser tests of the built book (Playwright driving Debian Chromium)."""
