import { create, fromBinary, toBinary, type DescMessage, type DescMethod, type DescService } from '@bufbuild/protobuf';

/** Messages pass through; plain init objects (what handlers may return) are normalised once. */
const asMessage = (desc: DescMessage, m: unknown) =>
  ((m as { $typeName?: string } | null)?.$typeName === desc.typeName ? m : create(desc, m as never)) as never;
import type { MethodDefinition } from '@grpc/grpc-js';

/** grpc-js method definitions built from protobuf-es descriptors: the generated code stays the one contract. */
export function methodDefinition(method: DescMethod): MethodDefinition<unknown, unknown> {
  return {
    path: `/${method.parent.typeName}/${method.name}`,
    requestStream: method.methodKind === 'client_streaming' || method.methodKind === 'bidi_streaming',
    responseStream: method.methodKind === 'server_streaming' || method.methodKind === 'bidi_streaming',
    requestSerialize: (m) => Buffer.from(toBinary(method.input, asMessage(method.input, m))),
    requestDeserialize: (b: Buffer) => fromBinary(method.input, b),
    responseSerialize: (m) => Buffer.from(toBinary(method.output, asMessage(method.output, m))),
    responseDeserialize: (b: Buffer) => fromBinary(method.output, b),
    originalName: method.localName,
  };
}

export function serviceDefinition(service: DescService): Record<string, MethodDefinition<unknown, unknown>> {
  return Object.fromEntries(service.methods.map((m) => [m.localName, methodDefinition(m)]));
}
