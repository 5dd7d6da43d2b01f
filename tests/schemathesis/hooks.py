"""Hooks of the schemathesis runs (tests/tests/schemathesis.rs).

Schemathesis writes image, text and octet-stream bodies but has no serializer for PDF, which the
notes showcase's attachments accept: a PDF part or body is bytes, as an octet-stream is.
"""

import schemathesis

schemathesis.serializer.alias("application/pdf", "application/octet-stream")
