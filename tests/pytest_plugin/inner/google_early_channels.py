"""Loaded with `-p` (before cloudguard seals the session and installs its guards): a suite's
plugin that makes its channels to Google at import time. Nothing is sent until they are used."""

import asyncio

import grpc
import grpc.aio

PUBSUB = "pubsub.googleapis.com:443"
SYNC = grpc.secure_channel(PUBSUB, grpc.ssl_channel_credentials())
AUTHORITY = grpc.secure_channel(
    "ipv4:142.250.1.95:443",
    grpc.ssl_channel_credentials(),
    options=(("grpc.ssl_target_name_override", "pubsub.googleapis.com"),),
)
# A stub made before the guards too (as a GAPIC client's transport makes its stubs).
AUTHORITY_TOPICS = AUTHORITY.unary_unary("/google.pubsub.v1.Publisher/ListTopics")
LOOP = asyncio.new_event_loop()
asyncio.set_event_loop(LOOP)
AIO = grpc.aio.secure_channel(PUBSUB, grpc.ssl_channel_credentials())
