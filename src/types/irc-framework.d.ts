/** The small part of irc-framework (4.x, no bundled types) that warden uses. */
declare module 'irc-framework' {
  export interface IrcConnectOptions {
    host: string;
    port: number;
    nick: string;
    username?: string;
    gecos?: string;
    password?: string;
    tls?: boolean;
    rejectUnauthorized?: boolean;
    auto_reconnect?: boolean;
    auto_reconnect_max_retries?: number;
    auto_reconnect_max_wait?: number;
    ping_interval?: number;
    ping_timeout?: number;
    message_max_length?: number;
    version?: string | null;
  }
  export interface IrcMessageEvent {
    nick: string;
    ident: string;
    hostname: string;
    target: string;
    message: string;
    type?: string;
    reply(message: string): void;
  }
  export interface IrcJoinEvent {
    nick: string;
    ident: string;
    hostname: string;
    channel: string;
  }
  export class Client {
    constructor(options?: Partial<IrcConnectOptions>);
    connect(options?: IrcConnectOptions): void;
    quit(message?: string): void;
    join(channel: string, key?: string): void;
    say(target: string, message: string): void;
    changeNick(nick: string): void;
    ping(message?: string): void;
    user: { nick: string };
    connection: { connected: boolean; end(): void };
    on(event: string, fn: (...args: any[]) => void): this;
    once(event: string, fn: (...args: any[]) => void): this;
    removeListener(event: string, fn: (...args: any[]) => void): this;
  }
}
