// A minimal LSP client over a child process's stdio: Content-Length framing, requests
// with ids, and notifications collected for waiting on them.

import type { ChildProcessWithoutNullStreams } from 'node:child_process';

interface Message {
    id?: number;
    method?: string;
    params?: unknown;
    result?: unknown;
    error?: { message: string };
}

export class LspStdio {
    private buffer = Buffer.alloc(0);
    private nextId = 1;
    private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
    private readonly waiters: { test: (m: Message) => boolean; resolve: (m: Message) => void }[] = [];
    readonly notifications: Message[] = [];

    constructor(private readonly child: ChildProcessWithoutNullStreams) {
        child.stdout.on('data', (chunk: Buffer) => this.receive(chunk));
    }

    private receive(chunk: Buffer): void {
        this.buffer = Buffer.concat([this.buffer, chunk]);
        for (;;) {
            const end = this.buffer.indexOf('\r\n\r\n');
            if (end < 0) {
                return;
            }
            const length = Number(/Content-Length: *(\d+)/i.exec(this.buffer.subarray(0, end).toString('ascii'))?.[1]);
            if (this.buffer.length < end + 4 + length) {
                return;
            }
            const message = JSON.parse(this.buffer.subarray(end + 4, end + 4 + length).toString('utf8')) as Message;
            this.buffer = this.buffer.subarray(end + 4 + length);
            this.dispatch(message);
        }
    }

    private dispatch(message: Message): void {
        if (message.id !== undefined && message.method === undefined) {
            const call = this.pending.get(message.id);
            this.pending.delete(message.id);
            if (message.error) {
                call?.reject(new Error(message.error.message));
            } else {
                call?.resolve(message.result);
            }
            return;
        }
        if (message.id !== undefined) {
            this.send({ id: message.id, result: null }); // requests from the server: nothing to give
            return;
        }
        this.notifications.push(message);
        for (const waiter of [...this.waiters]) {
            if (waiter.test(message)) {
                this.waiters.splice(this.waiters.indexOf(waiter), 1);
                waiter.resolve(message);
            }
        }
    }

    private send(message: object): void {
        const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...message }), 'utf8');
        this.child.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
        this.child.stdin.write(body);
    }

    request(method: string, params: unknown): Promise<unknown> {
        const id = this.nextId++;
        return new Promise((resolve, reject) => {
            this.pending.set(id, { resolve, reject });
            this.send({ id, method, params });
        });
    }

    notify(method: string, params: unknown): void {
        this.send({ method, params });
    }

    /** The first notification (already received or coming) that passes `test`. */
    waitFor(test: (m: Message) => boolean): Promise<Message> {
        const seen = this.notifications.find(test);
        if (seen) {
            return Promise.resolve(seen);
        }
        return new Promise((resolve) => this.waiters.push({ test, resolve }));
    }
}
