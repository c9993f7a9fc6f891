/** `warden mcp`: the MCP server of src/mcp/server.ts over stdio, until the client closes stdin. */
import type { Command } from 'commander';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createWardenMcpServer } from '../../mcp/server.js';
import { connectLazily } from '../../mcp/connection.js';
import { globals } from '../context.js';
import { VERSION } from '../program.js';

/** A message on stdin larger than this ends the session (a tool call is a few kilobytes). */
export const MAX_STDIN_MESSAGE_BYTES = 4 * 1024 * 1024;

export const mcpAction = async (_o: unknown, cmd: Command) => {
  const g = globals(cmd);
  const client = connectLazily({ address: g.address, namespace: g.namespace, taskQueue: g.taskQueue });
  const server = createWardenMcpServer({ client: client.get, version: VERSION });
  const transport = new StdioServerTransport(process.stdin, process.stdout, { maxBufferSize: MAX_STDIN_MESSAGE_BYTES });
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
    process.stdin.once('close', () => resolve());
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close().catch(() => undefined);
  await client.close();
};
