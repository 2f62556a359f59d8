"""Human-readable reports of releases (Markdown, optional plots)."""
