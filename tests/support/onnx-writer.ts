// A small ONNX writer for test models built inside a test: the protobuf wire format of ModelProto (onnx.proto,
// IR version 8) for what a hand-made graph needs — nodes with attributes, initializers as raw little-endian
// data, typed inputs and outputs with fixed or named dimensions, and metadata_props, which sherpa-onnx reads
// its model settings from. No dependency: the subset is small, and a generated protobuf library would be a
// second copy of onnx.proto to keep in step for a handful of field numbers.
//
// Repeated numbers are written unpacked (one field per value): every protobuf parser accepts that for onnx.proto's
// proto2 fields, packed or not.

export type OnnxElementType = "float" | "int32" | "int64" | "bool";

/** TensorProto.DataType */
const DATA_TYPE: Record<OnnxElementType, number> = { float: 1, int32: 6, int64: 7, bool: 9 };

export type OnnxTensor = { name: string; type: OnnxElementType; dims: number[]; values: ArrayLike<number> };

/** A graph input or output; a string dimension is symbolic (any size). */
export type OnnxValueInfo = { name: string; type: OnnxElementType; shape: Array<number | string> };

export type OnnxAttribute =
  { int: number } | { float: number } | { ints: number[] } | { floats: number[] } | { string: string };

export type OnnxNode = {
  op: string;
  inputs: string[];
  outputs: string[];
  attributes?: Record<string, OnnxAttribute>;
};

export type OnnxGraph = {
  name: string;
  nodes: OnnxNode[];
  inputs: OnnxValueInfo[];
  outputs: OnnxValueInfo[];
  initializers?: OnnxTensor[];
};

// ---- Protobuf wire format --------------------------------------------------------------------------------

const VARINT = 0;
const FIXED32 = 5;
const LENGTH_DELIMITED = 2;

function varint(value: bigint): Buffer {
  // int64 fields: negative numbers are their 64-bit two's complement, ten bytes on the wire.
  let v = BigInt.asUintN(64, value);
  const bytes: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    bytes.push(byte);
  } while (v > 0n);
  return Buffer.from(bytes);
}

function key(field: number, wireType: number): Buffer {
  return varint(BigInt((field << 3) | wireType));
}

function intField(field: number, value: number | bigint): Buffer {
  return Buffer.concat([key(field, VARINT), varint(BigInt(value))]);
}

function floatField(field: number, value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeFloatLE(value);
  return Buffer.concat([key(field, FIXED32), bytes]);
}

function bytesField(field: number, value: Buffer | string): Buffer {
  const bytes = typeof value === "string" ? Buffer.from(value, "utf8") : value;
  return Buffer.concat([key(field, LENGTH_DELIMITED), varint(BigInt(bytes.length)), bytes]);
}

// ---- ONNX messages -----------------------------------------------------------------------------------------

function rawData(type: OnnxElementType, values: ArrayLike<number>): Buffer {
  const count = values.length;
  if (type === "float") return Buffer.from(Float32Array.from(values).buffer);
  if (type === "int32") return Buffer.from(Int32Array.from(values).buffer);
  if (type === "bool") return Buffer.from(Uint8Array.from(values, (v) => (v ? 1 : 0)).buffer);
  const out = Buffer.alloc(count * 8);
  for (let i = 0; i < count; i++) out.writeBigInt64LE(BigInt(values[i]), i * 8);
  return out;
}

function tensorProto(tensor: OnnxTensor): Buffer {
  const expected = tensor.dims.reduce((product, dim) => product * dim, 1);
  if (expected !== tensor.values.length)
    throw new Error(
      `tensor ${tensor.name}: dims ${tensor.dims.join("×")} need ${expected} values, got ${tensor.values.length}`,
    );
  return Buffer.concat([
    ...tensor.dims.map((dim) => intField(1, dim)),
    intField(2, DATA_TYPE[tensor.type]),
    bytesField(8, tensor.name),
    bytesField(9, rawData(tensor.type, tensor.values)),
  ]);
}

function valueInfoProto(info: OnnxValueInfo): Buffer {
  const dims = info.shape.map((dim) => bytesField(1, typeof dim === "number" ? intField(1, dim) : bytesField(2, dim)));
  const shape = bytesField(2, Buffer.concat(dims));
  const tensorType = Buffer.concat([intField(1, DATA_TYPE[info.type]), shape]);
  return Buffer.concat([bytesField(1, info.name), bytesField(2, bytesField(1, tensorType))]);
}

/** AttributeProto.AttributeType */
const ATTRIBUTE_TYPE = { float: 1, int: 2, string: 3, floats: 6, ints: 7 } as const;

function attributeProto(name: string, attribute: OnnxAttribute): Buffer {
  const parts = [bytesField(1, name)];
  if ("int" in attribute) parts.push(intField(3, attribute.int), intField(20, ATTRIBUTE_TYPE.int));
  else if ("float" in attribute) parts.push(floatField(2, attribute.float), intField(20, ATTRIBUTE_TYPE.float));
  else if ("ints" in attribute)
    parts.push(...attribute.ints.map((v) => intField(8, v)), intField(20, ATTRIBUTE_TYPE.ints));
  else if ("floats" in attribute)
    parts.push(...attribute.floats.map((v) => floatField(7, v)), intField(20, ATTRIBUTE_TYPE.floats));
  else parts.push(bytesField(4, attribute.string), intField(20, ATTRIBUTE_TYPE.string));
  return Buffer.concat(parts);
}

function nodeProto(node: OnnxNode, index: number): Buffer {
  return Buffer.concat([
    ...node.inputs.map((input) => bytesField(1, input)),
    ...node.outputs.map((output) => bytesField(2, output)),
    bytesField(3, `${node.op.toLowerCase()}_${index}`),
    bytesField(4, node.op),
    ...Object.entries(node.attributes ?? {}).map(([name, attribute]) => bytesField(5, attributeProto(name, attribute))),
  ]);
}

function graphProto(graph: OnnxGraph): Buffer {
  return Buffer.concat([
    ...graph.nodes.map((node, index) => bytesField(1, nodeProto(node, index))),
    bytesField(2, graph.name),
    ...(graph.initializers ?? []).map((tensor) => bytesField(5, tensorProto(tensor))),
    ...graph.inputs.map((input) => bytesField(11, valueInfoProto(input))),
    ...graph.outputs.map((output) => bytesField(12, valueInfoProto(output))),
  ]);
}

/**
 * The bytes of an ONNX model file (ir_version 8, the default domain at `opset`, 13 unless given) with
 * `metadata` as metadata_props. Starts with 0x08, as every ONNX file does (field 1, ir_version).
 */
export function onnxModel(args: { graph: OnnxGraph; opset?: number; metadata?: Record<string, string | number> }) {
  const opset = bytesField(8, intField(2, args.opset ?? 13));
  const metadata = Object.entries(args.metadata ?? {}).map(([name, value]) =>
    bytesField(14, Buffer.concat([bytesField(1, name), bytesField(2, String(value))])),
  );
  return Buffer.concat([
    intField(1, 8),
    bytesField(2, "skribent-tests"),
    bytesField(7, graphProto(args.graph)),
    opset,
    ...metadata,
  ]);
}
