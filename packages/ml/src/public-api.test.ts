import * as ml from '@whetstone/ml';
import * as internals from '@whetstone/ml/internals';

// The package's entries, loaded by name as services and benchmarks load them. Growing the public entry is a decision
// (it is a contract other services rely on), so its list is spelled out here.
describe('the package entries', () => {
  it('when a service imports @whetstone/ml, then it gets exactly the curated public API', () => {
    expect(Object.keys(ml).sort()).toEqual(
      [
        'BUILTIN_JUDGE_CONFIDENCE_WEIGHT',
        'BUILTIN_JUDGE_ID',
        'builtinJudgeCanScore',
        'builtinJudgeScore',
        'DECODER_BASE',
        'DECODER_GENERATION_EVAL',
        'EXTRACT_BASE_ID',
        'JsonlValidator',
        'SchemaError',
        'conllToJsonl',
        'csvToJsonl',
        'decodeAdapterBundle',
        'decodeUtf8',
        'decoderTokens',
        'evaluateBundle',
        'evaluateDecoder',
        'evaluateDecoderBundle',
        'extractBaseModel',
        'extractionTokens',
        'fnv1a',
        'generateExamples',
        'isHeldOutJson',
        'loadDecoder',
        'loadModel',
        'MAX_CACHE_BREAKPOINTS',
        'MAX_TOP_LOGPROBS',
        'normalizeSchema',
        'PrefixCache',
        'readManifest',
        'scoreDecoderRun',
        'trainDecoderLora',
        'trainModel',
      ].sort(),
    );
  });

  it('when a benchmark imports @whetstone/ml/internals, then it gets the kernels and baselines', () => {
    expect(Object.keys(internals).sort()).toEqual(
      [
        'BERT_ENTITY_DEFAULTS',
        'BpeTokenizer',
        'KVCache',
        'LlamaForCausalLM',
        'loadDecoderCheckpoint',
        'parseLlamaConfig',
        'readSafetensors',
        'BertEntityModel',
        'MINILM_L6_V2',
        'fetchCheckpoint',
        'loadBertCheckpoint',
        'mergeLora',
        'modelsCacheDir',
        'resolveBaseDir',
        'trainBertEntities',
        'DECODER_DEFAULT_CONFIG',
        'HELDOUT_NAMES',
        'RELATIONS',
        'TRAIN_NAMES',
        'relationPairRows',
        'LinearTagger',
        'REJECTION_ACCURACY_BUDGET',
        'chooseRejectThreshold',
        'classifiersOf',
        'encoderOf',
        'readBundle',
        'taskScores',
        'withTemperature',
        'NaiveBayes',
        'NgramClassifier',
        'ngramNames',
        'classificationPRF',
        'initDecoderWeights',
        'initEncoderWeights',
        'loadEncoderBase',
        'loadGlove',
        'nn',
        'readBrown',
        'spanPRF',
        'validateJsonl',
        'zeroShotSpans',
      ].sort(),
    );
    expect(typeof internals.nn.tensor).toBe('function');
  });

  it('when code reaches past the entries into the source tree, then resolution refuses', () => {
    expect(() => require('@whetstone/ml/src/pipeline')).toThrow(/not exported|Cannot find module/);
  });
});
