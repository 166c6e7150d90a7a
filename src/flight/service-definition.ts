/**
 * The gRPC service `arrow.flight.protocol.FlightService` (Flight.proto) as a grpc-js service
 * definition. Method paths, streaming shapes and message types follow the proto exactly; the
 * (de)serializers are protobufjs codecs, except FlightData which has its own (flight-data.ts).
 */
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { decodeFlightData, encodeFlightData, type IncomingFlightData, type OutgoingFlightData } from './flight-data.js';
import { Flight, type MessageCodec, type Msg } from './protocol.js';

const SERVICE = '/arrow.flight.protocol.FlightService/';

function method<Req, Res>(
  name: string,
  requestStream: boolean,
  responseStream: boolean,
  req: { serialize: (v: Req) => Buffer; deserialize: (b: Buffer) => Req },
  res: { serialize: (v: Res) => Buffer; deserialize: (b: Buffer) => Res },
): MethodDefinition<Req, Res> {
  return {
    path: SERVICE + name,
    requestStream,
    responseStream,
    requestSerialize: req.serialize,
    requestDeserialize: req.deserialize,
    responseSerialize: res.serialize,
    responseDeserialize: res.deserialize,
    originalName: name,
  };
}

function proto(codec: MessageCodec) {
  return { serialize: (v: Msg) => codec.encode(v), deserialize: (b: Buffer) => codec.decode(b) };
}

/**
 * FlightData in both directions: sent as OutgoingFlightData, received as IncomingFlightData.
 * Server responses are encoded into one reused buffer (grpc-js copies each synchronously into its
 * frame: see encodeFlightData); client requests get a buffer each.
 */
const responseScratch = { buffer: Buffer.alloc(0) };
const flightDataOut = {
  serialize: (v: OutgoingFlightData) => encodeFlightData(v, responseScratch),
  deserialize: (b: Buffer) => decodeFlightData(b) as OutgoingFlightData,
};
const flightDataIn = {
  serialize: (v: IncomingFlightData) => encodeFlightData({ ...v, bodyParts: v.body ? [v.body] : [], bodyLength: v.body?.length ?? 0 }),
  deserialize: (b: Buffer) => decodeFlightData(b),
};

export const flightServiceDefinition = {
  Handshake: method('Handshake', true, true, proto(Flight.HandshakeRequest), proto(Flight.HandshakeResponse)),
  ListFlights: method('ListFlights', false, true, proto(Flight.Criteria), proto(Flight.FlightInfo)),
  GetFlightInfo: method('GetFlightInfo', false, false, proto(Flight.FlightDescriptor), proto(Flight.FlightInfo)),
  PollFlightInfo: method('PollFlightInfo', false, false, proto(Flight.FlightDescriptor), proto(Flight.PollInfo)),
  GetSchema: method('GetSchema', false, false, proto(Flight.FlightDescriptor), proto(Flight.SchemaResult)),
  DoGet: method('DoGet', false, true, proto(Flight.Ticket), flightDataOut),
  DoPut: method('DoPut', true, true, flightDataIn, proto(Flight.PutResult)),
  DoExchange: method('DoExchange', true, true, flightDataIn, flightDataOut),
  DoAction: method('DoAction', false, true, proto(Flight.Action), proto(Flight.Result)),
  ListActions: method('ListActions', false, true, proto(Flight.Empty), proto(Flight.ActionType)),
} satisfies ServiceDefinition;

export type FlightServiceDefinition = typeof flightServiceDefinition;
