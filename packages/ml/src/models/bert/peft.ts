import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CheckpointError, encodeSafetensors, readSafetensors } from '../../checkpoints/safetensors';
import { Tensor } from '../../nn/tensor';
import { loraTensors } from './adapters';
import { BertModel, LAYER_LINEARS, type BertLayer, type Linear } from './modeling-bert';

/**
 * LoRA adapters in PEFT's layout: `adapter_config.json` and `adapter_model.safetensors` with PEFT's tensor names
 * (`base_model.model.encoder.layer.0.attention.self.query.lora_A.weight`), so `PeftModel.from_pretrained` (and
 * vLLM, LoRAX) load what Whetstone trains.
 */

/** PEFT's target_modules for BERT's attention and FFN linears (a regex, full-matched, so the pooler is left out). */
export const PEFT_TARGET_REGEX =
  '.*encoder\\.layer\\.\\d+\\.(attention\\.self\\.(query|key|value)|attention\\.output\\.dense|intermediate\\.dense|output\\.dense)';

export interface AdapterConfig {
  peft_type: 'LORA';
  r: number;
  lora_alpha: number;
  target_modules: string;
  base_model_name_or_path: string;
  [key: string]: unknown;
}

export function saveLoraAdapter(model: BertModel, dir: string, baseModel: string): void {
  const tensors = loraTensors(model);
  if (!tensors.size) throw new Error('saveLoraAdapter: the model has no LoRA factors');
  const first = model.weights.layers[0]!.query.lora!;
  const r = first.A.shape[0]!;
  const config: AdapterConfig = {
    peft_type: 'LORA',
    task_type: null,
    base_model_name_or_path: baseModel,
    revision: null,
    inference_mode: true,
    r,
    lora_alpha: first.scaling * r,
    lora_dropout: 0,
    target_modules: PEFT_TARGET_REGEX,
    bias: 'none',
    fan_in_fan_out: false,
    modules_to_save: null,
    init_lora_weights: true,
    use_rslora: false,
    use_dora: false,
    layers_to_transform: null,
    rank_pattern: {},
    alpha_pattern: {},
  };
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'adapter_config.json'), `${JSON.stringify(config, null, 2)}\n`);
  writeFileSync(join(dir, 'adapter_model.safetensors'), encodeSafetensors(tensors, { format: 'pt' }));
}

/** The base with a PEFT LoRA adapter attached (unmerged; `mergeLora` folds it in). */
export function loadLoraAdapter(base: BertModel, dir: string): BertModel {
  const cfgPath = join(dir, 'adapter_config.json');
  let config: AdapterConfig;
  try {
    config = JSON.parse(readFileSync(cfgPath, 'utf8')) as AdapterConfig;
  } catch (e) {
    throw new CheckpointError(`${cfgPath}: not readable (${(e as Error).message})`);
  }
  if (config.peft_type !== 'LORA')
    throw new CheckpointError(`${cfgPath}: peft_type ${config.peft_type}; supported: LORA`);
  if (config.use_rslora || config.use_dora) throw new CheckpointError(`${cfgPath}: rsLoRA and DoRA are not supported`);
  const weightsPath = join(dir, 'adapter_model.safetensors');
  const { tensors } = readSafetensors(weightsPath);
  const scaling = config.lora_alpha / config.r;
  const w = base.weights;
  let found = 0;
  const layers = w.layers.map((l, i) => {
    const copy: BertLayer = { ...l };
    for (const [field, name] of LAYER_LINEARS) {
      const key = (ab: string) =>
        [
          `base_model.model.encoder.layer.${i}.${name}.lora_${ab}.weight`,
          `base_model.model.encoder.layer.${i}.${name}.lora_${ab}.default.weight`,
        ].find((k) => tensors.has(k));
      const [ka, kb] = [key('A'), key('B')];
      if (!ka || !kb) continue;
      const lin = l[field] as Linear;
      const [out, inp] = lin.weight.shape as [number, number];
      const A = tensors.get(ka)!;
      const B = tensors.get(kb)!;
      if (A.shape[0] !== config.r || A.shape[1] !== inp || B.shape[0] !== out || B.shape[1] !== config.r)
        throw new CheckpointError(
          `${weightsPath}: ${ka} / ${kb} have shapes [${A.shape}] / [${B.shape}], expected [${config.r},${inp}] / [${out},${config.r}]`,
        );
      (copy as unknown as Record<string, Linear>)[field] = {
        ...lin,
        lora: { A: new Tensor(A.data, A.shape), B: new Tensor(B.data, B.shape), scaling },
      };
      found++;
    }
    return copy;
  });
  if (!found) throw new CheckpointError(`${weightsPath}: no LoRA tensor matches this model's layers`);
  return new BertModel(base.config, { ...w, layers });
}
