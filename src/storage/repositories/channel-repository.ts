import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { SecretBox } from '../../shared/secret-box.js';
import {
  fromBoolean, parseObject, parseStringArray, parseStringRecord, toBoolean, toJson, toNumber,
} from '../convert.js';
import type { ChannelsTable, Database } from '../database-schema.js';
import { tableAccess } from './table-access.js';
import type { Channel } from '../../domain/records.js';
import type { ChannelPatch, ChannelRepository } from '../storage.js';

/** Upstream keys are only ever written sealed; `api_keys_sealed` holds SecretBox ciphertext of a JSON array. */
function createCodec(secretBox: SecretBox) {
  const sealKeys = (keys: string[]): string => secretBox.seal(toJson(keys));
  const openKeys = (sealed: string): string[] => parseStringArray(secretBox.open(sealed), 'channels.api_keys');

  const toRecord = (row: Selectable<ChannelsTable>): Channel => ({
    id: row.id,
    name: row.name,
    type: row.type,
    baseUrl: row.base_url,
    apiKeys: openKeys(row.api_keys_sealed),
    models: parseStringRecord(row.models, 'channels.models'),
    priority: toNumber(row.priority),
    weight: toNumber(row.weight),
    enabled: toBoolean(row.enabled),
    headers: parseStringRecord(row.headers, 'channels.headers'),
    settings: parseObject(row.settings, 'channels.settings'),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  });

  const toRow = (channel: Channel): Insertable<ChannelsTable> => ({
    id: channel.id,
    name: channel.name,
    type: channel.type,
    base_url: channel.baseUrl,
    api_keys_sealed: sealKeys(channel.apiKeys),
    models: toJson(channel.models),
    priority: channel.priority,
    weight: channel.weight,
    enabled: fromBoolean(channel.enabled),
    headers: toJson(channel.headers),
    settings: toJson(channel.settings),
    created_at: channel.createdAt,
    updated_at: channel.updatedAt,
  });

  const toChanges = (patch: ChannelPatch, now: number): Updateable<ChannelsTable> => {
    const changes: Updateable<ChannelsTable> = { updated_at: now };
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.type !== undefined) changes.type = patch.type;
    if (patch.baseUrl !== undefined) changes.base_url = patch.baseUrl;
    if (patch.apiKeys !== undefined) changes.api_keys_sealed = sealKeys(patch.apiKeys);
    if (patch.models !== undefined) changes.models = toJson(patch.models);
    if (patch.priority !== undefined) changes.priority = patch.priority;
    if (patch.weight !== undefined) changes.weight = patch.weight;
    if (patch.enabled !== undefined) changes.enabled = fromBoolean(patch.enabled);
    if (patch.headers !== undefined) changes.headers = toJson(patch.headers);
    if (patch.settings !== undefined) changes.settings = toJson(patch.settings);
    return changes;
  };

  return { toRecord, toRow, toChanges };
}

export function createChannelRepository(db: Kysely<Database>, secretBox: SecretBox): ChannelRepository {
  const channels = tableAccess(db, { table: 'channels', key: 'id', keyOf: (channel: Channel) => channel.id, ...createCodec(secretBox) });
  return {
    create: channels.insert,
    getById: channels.get,
    getByName: (name) => channels.getBy('name', name),
    list: (page) => channels.page(page),
    listAll: () => channels.listAll(),
    update: channels.update,
    delete: channels.delete,
  };
}
