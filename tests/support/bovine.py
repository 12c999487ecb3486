"""bovine's test server (``bovine.testing.server``, from PyPI) run as its own
process: an independent ActivityPub implementation that verifies every
activity it receives with its own signature checker and prints what it
accepted; activities from it are built and signed by bovine's actor in the
test's process (:func:`post_as_bovine`)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading

import aiohttp
import httpx
from bovine.testing.server import ServerConfig

from support.federation import eventually, free_port

SERVE = """
import sys
from bovine.testing.server import ServerConfig, create_app
config = ServerConfig.load(sys.argv[1])
create_app(config).run(host="127.0.0.1", port=int(sys.argv[2]))
"""


class Bovine:
    def __init__(self, tmp):
        self.port = free_port()
        self.config = ServerConfig.from_env()
        self.config.hostname = f"127.0.0.1:{self.port}"
        self.config.handle_name = "buttercup"
        path = tmp / "bovine.toml"
        self.config.save(str(path))
        self.out: list[str] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVE, str(path), str(self.port)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()
        eventually(self._up, 30, "bovine's server starting")

    def _read(self):
        for line in self.proc.stdout:
            self.out.append(line)

    def _up(self):
        try:
            return httpx.get(f"http://{self.config.hostname}/actor").status_code == 200
        except httpx.HTTPError:
            return False

    def received(self) -> list[tuple[str, dict]]:
        """(the signer bovine verified, the activity) of each accepted delivery."""
        text = "".join(self.out)
        found = []
        for chunk in text.split("Received in inbox from ")[1:]:
            signer, _, rest = chunk.partition("\n")
            try:
                doc, _ = json.JSONDecoder().raw_decode(rest)
            except ValueError:
                continue  # still being printed
            found.append((signer.strip(), doc))
        return found

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


def post_as_bovine(bovine: Bovine, target: str, activity: dict) -> int:
    async def send():
        async with aiohttp.ClientSession() as session:
            actor = bovine.config.create_actor()
            await actor.init(session=session)
            response = await actor.post(target, activity)
            return response.status

    return asyncio.run(send())
