import { anthropicMessagesCodec } from '../../codecs/anthropic-messages/index.js';
import { geminiCodec } from '../../codecs/gemini/index.js';
import { openAIChatCodec } from '../../codecs/openai-chat/index.js';
import { needsOfOpenAIChatBody } from '../../codecs/openai-chat/request-needs.js';
import { validateOpenAIChatRequest } from '../../codecs/openai-chat/validate-request.js';
import { needsOfChat } from '../../ir/request-needs.js';
import { estimateChatRequestTokens, estimateMessagesTokens } from '../../shared/estimate-tokens.js';
import type { ChatEndpoint } from './chat-endpoint.js';
import { once } from './chat-endpoint.js';

/** POST /v1/chat/completions: validated up front, decoded to the IR only if a translated channel needs it. */
export const openAIChatEndpoint: ChatEndpoint = {
  protocol: 'openai-chat',
  readEnvelope(_context, body) {
    const envelope = validateOpenAIChatRequest(body);
    return {
      codec: openAIChatCodec,
      model: envelope.model,
      stream: envelope.stream,
      includeUsage: envelope.includeUsage,
      sse: true,
      maxOutputTokens: envelope.maxOutputTokens,
      promptTokensEstimate: estimateMessagesTokens(body.messages),
      needs: needsOfOpenAIChatBody(body),
      chat: once(() => openAIChatCodec.decodeRequest(body, {})),
    };
  },
};

/** POST /v1/messages (Anthropic Messages). */
export const anthropicMessagesEndpoint: ChatEndpoint = {
  protocol: 'anthropic-messages',
  readEnvelope(_context, body) {
    const chat = anthropicMessagesCodec.decodeRequest(body, {});
    return {
      codec: anthropicMessagesCodec,
      model: chat.model,
      stream: chat.stream,
      includeUsage: false,
      sse: true,
      maxOutputTokens: chat.maxOutputTokens ?? null,
      promptTokensEstimate: estimateChatRequestTokens(chat),
      needs: needsOfChat(chat),
      chat: () => chat,
    };
  },
};

/** POST /v1beta/models/{model}:generateContent and :streamGenerateContent (also under /v1/). */
export function geminiEndpoint(stream: boolean): ChatEndpoint {
  return {
    protocol: 'gemini',
    readEnvelope(context, body) {
      const chat = geminiCodec.decodeRequest(body, { pathModel: context.params.model ?? '', stream });
      return {
        codec: geminiCodec,
        model: chat.model,
        stream,
        includeUsage: false,
        sse: context.query.get('alt') === 'sse',
        maxOutputTokens: chat.maxOutputTokens ?? null,
        promptTokensEstimate: estimateChatRequestTokens(chat),
        needs: needsOfChat(chat),
        chat: () => chat,
      };
    },
  };
}
