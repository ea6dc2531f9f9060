/**
 * What the model-server's use cases need from the outside. Models themselves
 * are @whetstone/ml types: this service runs them and adds nothing to their shape.
 */
import type { Decoder, ExtractionModel } from '@whetstone/ml';

/** Where a trained model's bundle lives; bucket and key are empty for built-in base models. */
export interface ModelRef {
  modelId: string;
  bucket: string;
  key: string;
}

/** Reads bundles from object storage. */
export interface BundleSource {
  read(bucket: string, key: string): Promise<Uint8Array>;
}

/** Turns a built-in id or a bundle into a runnable model. */
export interface ModelLoader {
  builtin(modelId: string): ExtractionModel | undefined;
  fromBundle(bytes: Uint8Array): ExtractionModel;
  /** A decoder: the built-in base (no bytes) or a job's adapter bundle. */
  decoder(bytes?: Uint8Array): Decoder;
}
