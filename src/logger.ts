/** The process logger: pino, JSON lines on stderr (stdout stays for command output). */
import { pino, type Logger } from 'pino';

export function createLogger(name: string, level = process.env.WARDEN_LOG_LEVEL ?? 'info'): Logger {
  return pino({ name, level, base: { pid: process.pid } }, pino.destination({ fd: 2, sync: false }));
}
