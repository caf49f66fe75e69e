"""Admission for clawplane's custom resources: a validating webhook that speaks clawplane's diagnostics.

``settings`` is light (the CLI parses into it); ``server`` brings aiohttp and the validator.
"""
