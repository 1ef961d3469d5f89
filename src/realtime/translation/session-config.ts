import { isObject, objectOf, stringOf } from './frame-translator.js';
import { OPENAI_PCM_RATE } from './pcm16-resampler.js';

/** OpenAI's own voices: a Gemini upstream has none of them, so they leave Gemini's default voice in place. */
const OPENAI_VOICES = new Set(['alloy', 'ash', 'ballad', 'coral', 'echo', 'sage', 'shimmer', 'verse', 'marin', 'cedar']);

/** An OpenAI function tool as a session declares it. */
export interface FunctionTool {
  name: string;
  description?: string;
  parameters?: unknown;
}

/** What an OpenAI Realtime session is set to, as far as a Gemini Live setup can carry it. */
export interface OpenAISessionConfig {
  outputModalities: Array<'text' | 'audio'>;
  instructions: string;
  tools: FunctionTool[];
  voice: string | null;
  maxOutputTokens: number | 'inf';
  /** `audio.input.turn_detection`: null is manual turns (the caller commits), else the server detects speech. */
  turnDetection: Record<string, unknown> | null;
  /** `audio.input.transcription`, null when the caller asked for none. */
  transcription: Record<string, unknown> | null;
}

export function defaultOpenAISession(): OpenAISessionConfig {
  return {
    outputModalities: ['audio'],
    instructions: '',
    tools: [],
    voice: null,
    maxOutputTokens: 'inf',
    turnDetection: { type: 'server_vad' },
    transcription: null,
  };
}

/** A `session.update` the translation refuses, with the field it names. */
export interface SessionRefusal {
  param: string;
  message: string;
}

function audioFormatRefusal(format: unknown, param: string): SessionRefusal | null {
  if (format === undefined || format === null) return null;
  const fields = objectOf(format);
  const type = stringOf(fields.type) ?? 'audio/pcm';
  if (type !== 'audio/pcm' || (fields.rate !== undefined && fields.rate !== OPENAI_PCM_RATE)) {
    return { param, message: `Only audio/pcm at ${OPENAI_PCM_RATE} Hz is supported when the model is served over Gemini Live.` };
  }
  return null;
}

/**
 * The session after a `session.update`'s `session` (fields it leaves out keep their value), or why it is refused:
 * only PCM16 at 24 kHz is carried, and only function tools.
 */
export function applySessionUpdate(config: OpenAISessionConfig, session: unknown): OpenAISessionConfig | SessionRefusal {
  const fields = objectOf(session);
  const next: OpenAISessionConfig = { ...config };
  const modalities = fields.output_modalities;
  if (Array.isArray(modalities)) {
    next.outputModalities = modalities.includes('audio') ? ['audio'] : ['text'];
  }
  if (typeof fields.instructions === 'string') next.instructions = fields.instructions;
  if (Array.isArray(fields.tools)) {
    const tools: FunctionTool[] = [];
    for (const [index, tool] of fields.tools.entries()) {
      const entry = objectOf(tool);
      if ((entry.type ?? 'function') !== 'function' || typeof entry.name !== 'string') {
        return { param: `session.tools[${index}]`, message: 'Only function tools are supported when the model is served over Gemini Live.' };
      }
      tools.push({ name: entry.name, ...(typeof entry.description === 'string' ? { description: entry.description } : {}), ...(entry.parameters === undefined ? {} : { parameters: entry.parameters }) });
    }
    next.tools = tools;
  }
  if (typeof fields.max_output_tokens === 'number' || fields.max_output_tokens === 'inf') next.maxOutputTokens = fields.max_output_tokens;
  const audio = objectOf(fields.audio);
  const input = objectOf(audio.input);
  const output = objectOf(audio.output);
  const refusal = audioFormatRefusal(input.format, 'session.audio.input.format') ?? audioFormatRefusal(output.format, 'session.audio.output.format');
  if (refusal !== null) return refusal;
  if ('turn_detection' in input) next.turnDetection = isObject(input.turn_detection) ? input.turn_detection : null;
  if ('transcription' in input) next.transcription = isObject(input.transcription) ? input.transcription : null;
  if (typeof output.voice === 'string') next.voice = output.voice;
  return next;
}

/**
 * The Gemini Live `setup` (less its model) for an OpenAI session: the answer's modality, the instructions as the
 * system instruction, function tools as declarations, manual turns as automatic activity detection turned off, the
 * voice when it is one of Gemini's (OpenAI's own voices are not), and transcription of the answer's audio (OpenAI
 * always streams a transcript beside audio) and of the input when the caller asked for it.
 */
export function geminiSetupOfSession(config: OpenAISessionConfig): Record<string, unknown> {
  const audioOut = config.outputModalities.includes('audio');
  const generationConfig: Record<string, unknown> = { responseModalities: [audioOut ? 'AUDIO' : 'TEXT'] };
  if (typeof config.maxOutputTokens === 'number') generationConfig.maxOutputTokens = config.maxOutputTokens;
  if (audioOut && config.voice !== null && !OPENAI_VOICES.has(config.voice)) {
    generationConfig.speechConfig = { voiceConfig: { prebuiltVoiceConfig: { voiceName: config.voice } } };
  }
  const setup: Record<string, unknown> = { generationConfig };
  if (config.instructions !== '') setup.systemInstruction = { parts: [{ text: config.instructions }] };
  if (config.tools.length > 0) {
    setup.tools = [{ functionDeclarations: config.tools.map((tool) => ({ name: tool.name, ...(tool.description === undefined ? {} : { description: tool.description }), ...(tool.parameters === undefined ? {} : { parametersJsonSchema: tool.parameters }) })) }];
  }
  if (config.turnDetection === null) setup.realtimeInputConfig = { automaticActivityDetection: { disabled: true } };
  if (config.transcription !== null) setup.inputAudioTranscription = {};
  if (audioOut) setup.outputAudioTranscription = {};
  return setup;
}

/** The session object of OpenAI's `session.created` / `session.updated` for the session as configured. */
export function openAISessionObject(config: OpenAISessionConfig, id: string, model: string): Record<string, unknown> {
  return {
    type: 'realtime',
    object: 'realtime.session',
    id,
    model,
    output_modalities: config.outputModalities,
    instructions: config.instructions,
    tools: config.tools.map((tool) => ({ type: 'function', ...tool })),
    tool_choice: 'auto',
    max_output_tokens: config.maxOutputTokens,
    audio: {
      input: { format: { type: 'audio/pcm', rate: OPENAI_PCM_RATE }, transcription: config.transcription, turn_detection: config.turnDetection },
      output: { format: { type: 'audio/pcm', rate: OPENAI_PCM_RATE }, voice: config.voice ?? 'alloy' },
    },
  };
}

/** The text of a Gemini `Content` (or a string, as the SDK allows for a system instruction). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  const parts = objectOf(content).parts;
  if (!Array.isArray(parts)) return '';
  return parts.map((part) => stringOf(objectOf(part).text) ?? '').filter((text) => text !== '').join('\n');
}

/**
 * A Gemini `Schema` (`parameters`) as JSON Schema: its type names are upper case (`OBJECT`, `STRING`), JSON Schema's
 * lower case; the rest of its fields are JSON Schema's already.
 */
export function jsonSchemaOfGemini(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(jsonSchemaOfGemini);
  if (!isObject(schema)) return schema;
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type' && typeof value === 'string') result[key] = value.toLowerCase();
    else if (key === 'properties' && isObject(value)) result[key] = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, jsonSchemaOfGemini(property)]));
    else if (key === 'items' || key === 'anyOf') result[key] = jsonSchemaOfGemini(value);
    else result[key] = value;
  }
  return result;
}

/** What the Gemini caller's setup asked for that changes how the translation speaks to it. */
export interface GeminiCallerSetup {
  textOutput: boolean;
  inputTranscription: boolean;
  outputTranscription: boolean;
  /** Automatic activity detection off: the caller marks turns with `activityStart` / `activityEnd`. */
  manualActivity: boolean;
}

export function geminiCallerSetup(setup: Record<string, unknown>): GeminiCallerSetup {
  const modalities = objectOf(setup.generationConfig).responseModalities;
  const detection = objectOf(objectOf(setup.realtimeInputConfig).automaticActivityDetection);
  return {
    textOutput: Array.isArray(modalities) && modalities.includes('TEXT') && !modalities.includes('AUDIO'),
    inputTranscription: isObject(setup.inputAudioTranscription),
    outputTranscription: isObject(setup.outputAudioTranscription),
    manualActivity: detection.disabled === true,
  };
}

/**
 * The OpenAI `session.update` session for a Gemini caller's setup: modality, system instruction as instructions,
 * function declarations as function tools, the voice when it is one of OpenAI's, the output token limit, manual turns
 * when the caller turned automatic activity detection off, input transcription when it asked for it.
 */
export function openAISessionOfSetup(setup: Record<string, unknown>): Record<string, unknown> {
  const caller = geminiCallerSetup(setup);
  const generationConfig = objectOf(setup.generationConfig);
  const session: Record<string, unknown> = { type: 'realtime', output_modalities: [caller.textOutput ? 'text' : 'audio'] };
  const instructions = contentText(setup.systemInstruction);
  if (instructions !== '') session.instructions = instructions;
  const tools: Array<Record<string, unknown>> = [];
  for (const tool of Array.isArray(setup.tools) ? setup.tools : []) {
    const declarations = objectOf(tool).functionDeclarations;
    for (const declaration of Array.isArray(declarations) ? declarations : []) {
      const fields = objectOf(declaration);
      if (typeof fields.name !== 'string') continue;
      tools.push({ type: 'function', name: fields.name, ...(typeof fields.description === 'string' ? { description: fields.description } : {}), parameters: fields.parametersJsonSchema ?? (fields.parameters === undefined ? { type: 'object', properties: {} } : jsonSchemaOfGemini(fields.parameters)) });
    }
  }
  if (tools.length > 0) session.tools = tools;
  if (typeof generationConfig.maxOutputTokens === 'number') session.max_output_tokens = generationConfig.maxOutputTokens;
  const input: Record<string, unknown> = { format: { type: 'audio/pcm', rate: OPENAI_PCM_RATE } };
  if (caller.manualActivity) input.turn_detection = null;
  if (caller.inputTranscription) input.transcription = { model: 'gpt-4o-mini-transcribe' };
  const output: Record<string, unknown> = { format: { type: 'audio/pcm', rate: OPENAI_PCM_RATE } };
  const voice = stringOf(objectOf(objectOf(objectOf(generationConfig.speechConfig).voiceConfig).prebuiltVoiceConfig).voiceName);
  if (voice !== undefined && OPENAI_VOICES.has(voice.toLowerCase())) output.voice = voice.toLowerCase();
  session.audio = { input, output };
  return session;
}
