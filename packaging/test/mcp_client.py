"""One session of the official Python MCP client (PyPI `mcp`) with an installed
`metis-memory`, as an MCP client's configuration starts it (run by
scripts/test-cli-packages):

    python mcp_client.py VERSION WORKSPACE COMMAND [ARG...]

starts the server as COMMAND ARG... (found on PATH, with the caller's environment),
initializes (the server must report VERSION), lists the tools and adds an entry to
WORKSPACE's MEMORY.md with `memory_add`, checked on disk."""

import os
import sys
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

PATIENCE_SECONDS = 60
WRITE_TOOLS = {"memory_add", "memory_replace", "memory_consolidate"}


async def session(version: str, workspace: Path, command: str, args: list[str]) -> None:
    server = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as client:
            with anyio.fail_after(PATIENCE_SECONDS):
                started = await client.initialize()
                reported = started.server_info.version
                assert reported == version, f"serverInfo.version is {reported}, not {version}"
                tools = {tool.name for tool in (await client.list_tools()).tools}
                assert WRITE_TOOLS <= tools, f"tools: {sorted(tools)}"
                entry = f"- served by {command} from the installed package"
                result = await client.call_tool("memory_add", {"file": "MEMORY.md", "entry": entry})
                assert not result.is_error, result
    memory = (workspace / ".metis" / "MEMORY.md").read_text()
    assert entry in memory, memory


def main() -> None:
    version, workspace, command, *args = sys.argv[1:]
    anyio.run(session, version, Path(workspace), command, args)
    print(f"python mcp client: {command} {' '.join(args)}: initialize, list_tools, memory_add ok")


if __name__ == "__main__":
    main()
