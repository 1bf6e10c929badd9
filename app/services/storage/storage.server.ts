import { createLocalStorage } from "./local.server";
import { createS3Storage } from "./s3.server";
import type { ObjectStorage, StorageConfig } from "./types.server";

// The contract and the key rules live in their own modules so the implementations need not import this one;
// they are re-exported here because the rest of the app imports them from `~/services/storage.server`.
export type { ByteRange, ObjectStorage, StorageConfig, StorageHealth } from "./types.server";
export {
  DEFAULT_CHECK_TIMEOUT_MS,
  DEFAULT_DOWNLOAD_URL_SECONDS,
  DEFAULT_UPLOAD_URL_SECONDS,
  InvalidStorageKeyError,
  MAX_URL_EXPIRY_SECONDS,
  STORAGE_AREAS,
  assertContentType,
  assertKeyOwnedBy,
  assertWellFormedKey,
  makeStorageKey,
  ownerPrefix,
  resolveExpiry,
  type StorageArea,
} from "./keys.server";

export function createStorage(config: StorageConfig): ObjectStorage {
  switch (config.kind) {
    case "local":
      return createLocalStorage(config);
    case "s3":
      return createS3Storage(config);
  }
}

// Set once at boot by the configuration module; routes and jobs read it. A module-level instance keeps one
// S3 client (and its connection pool) per process.
let currentStorage: ObjectStorage | undefined;

export function setStorage(storage: ObjectStorage): void {
  currentStorage = storage;
}

export function getStorage(): ObjectStorage {
  if (!currentStorage) {
    throw new Error("Object storage is not initialised: call setStorage(createStorage(config)) at startup");
  }
  return currentStorage;
}
