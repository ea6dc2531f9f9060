import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitForOutput } from './processes';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** A one-node KRaft Kafka (broker and controller in one JVM) on loopback, for tests. */
export interface KafkaBroker {
  /** `127.0.0.1:<port>`, for KAFKA_BROKERS and kafkajs. */
  brokers: string;
  /** The JVM's process id while it runs. */
  pid(): number | undefined;
  /** Everything the broker printed (warnings and the start line). */
  logs(): string;
  /** Send `signal` (SIGKILL: a crash, nothing flushed by the broker) and wait for the JVM to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Start it again on the same ports and data (after `kill`); resolves once it serves. */
  restart(): Promise<void>;
  /** Stop it (SIGTERM) and remove its data. */
  stop(): Promise<void>;
}

/**
 * The broker's jars: KAFKA_JARS_DIR when set, else resolved once by tools/kafka/install.sh (Maven, from
 * tools/kafka/pom.xml) into a cache outside the repository.
 */
export function kafkaJarsDir(): string {
  if (process.env.KAFKA_JARS_DIR) return process.env.KAFKA_JARS_DIR;
  return execFileSync('bash', [path.join(ROOT, 'tools', 'kafka', 'install.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

/** Kafka's cluster ids are 16 random bytes in URL-safe base64 without padding, never starting with '-' (a flag). */
function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

function serverProperties(dataDir: string, port: number, controllerPort: number): string {
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
    `log.dirs=${path.join(dataDir, 'log')}`,
    // KafkaTransport creates its topics; a broker that would create them on first use could hide a missing one.
    'auto.create.topics.enable=false',
    'num.partitions=1',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=1',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'share.coordinator.state.topic.replication.factor=1',
    'share.coordinator.state.topic.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
    // A 2-core machine: few threads.
    'num.network.threads=2',
    'num.io.threads=2',
    'background.threads=2',
    'num.recovery.threads.per.data.dir=1',
    '',
  ].join('\n');
}

/** Warnings only, plus the line that says the server is up (what `restart` and the first start wait for). */
const LOG4J2 = [
  'status=error',
  'rootLogger.level=WARN',
  'rootLogger.appenderRef.stdout.ref=STDOUT',
  'appender.stdout.type=Console',
  'appender.stdout.name=STDOUT',
  'appender.stdout.layout.type=PatternLayout',
  'appender.stdout.layout.pattern=[%d] %p %m (%c)%n',
  'logger.started.name=kafka.server.KafkaRaftServer',
  'logger.started.level=INFO',
  '',
].join('\n');

const STARTED = /Kafka Server started/;

/**
 * Format a fresh storage directory with a random cluster id and start `kafka.Kafka` on two free loopback ports
 * (client and controller). Resolves once the broker says it started; the broker is killed when this process exits.
 */
export async function startKafkaBroker(options: { jarsDir?: string; heapMb?: number } = {}): Promise<KafkaBroker> {
  const jars = options.jarsDir ?? kafkaJarsDir();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'whetstone-kafka-'));
  mkdirSync(path.join(dir, 'log'));
  const [port, controllerPort] = [await freePort(), await freePort()];
  const properties = path.join(dir, 'server.properties');
  writeFileSync(properties, serverProperties(dir, port, controllerPort));
  writeFileSync(path.join(dir, 'log4j2.properties'), LOG4J2);
  const jvm = [
    `-Xmx${options.heapMb ?? 512}m`,
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${path.join(dir, 'log4j2.properties')}`,
    '-cp',
    path.join(jars, '*'),
  ];
  execFileSync('java', [...jvm, 'kafka.tools.StorageTool', 'format', '-t', clusterId(), '-c', properties], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });

  let child: ChildProcess | undefined;
  let output = '';
  const killOnExit = () => child?.kill('SIGKILL');
  process.once('exit', killOnExit);

  const launch = async () => {
    const started = output.length;
    const proc = spawn('java', [...jvm, 'kafka.Kafka', properties], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    proc.stdout!.on('data', (b: Buffer) => (output += b.toString()));
    proc.stderr!.on('data', (b: Buffer) => (output += b.toString()));
    await waitForOutput(proc, () => output.slice(started), STARTED, 120_000, 'Kafka broker');
  };
  const exit = async (signal: NodeJS.Signals) => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill(signal);
    // A controlled shutdown takes a few seconds; one that hangs is cut short.
    const force = setTimeout(() => proc.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(force);
  };

  try {
    await launch();
  } catch (err) {
    await exit('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    brokers: `127.0.0.1:${port}`,
    pid: () => (child && child.exitCode === null && child.signalCode === null ? child.pid : undefined),
    logs: () => output,
    kill: (signal = 'SIGKILL') => exit(signal),
    restart: async () => {
      await exit('SIGKILL');
      await launch();
    },
    stop: async () => {
      await exit('SIGTERM');
      process.removeListener('exit', killOnExit);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
