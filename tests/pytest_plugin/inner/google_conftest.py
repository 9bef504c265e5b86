"""A conftest that makes its channels to Google while it is imported (after the guards)."""

import asyncio

import grpc
import grpc.aio

PUBSUB = "pubsub.googleapis.com:443"
SYNC = grpc.secure_channel(PUBSUB, grpc.ssl_channel_credentials())
LOOP = asyncio.new_event_loop()
asyncio.set_event_loop(LOOP)
AIO = grpc.aio.secure_channel(PUBSUB, grpc.ssl_channel_credentials())
