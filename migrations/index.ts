import type { Migration } from "kysely";
import * as m0001 from "./0001_create_foundation";
import * as m0002 from "./0002_create_templates";
import * as m0003 from "./0003_recording_uploads";
import * as m0004 from "./0004_multipart_uploads";
import * as m0005 from "./0005_transcription";
import * as m0006 from "./0006_letters";
import * as m0007 from "./0007_live_sessions";
import * as m0008 from "./0008_chat";
import * as m0009 from "./0009_admin";
import * as m0010 from "./0010_account_purges";
import * as m0011 from "./0011_audio_retention";
import * as m0012 from "./0012_live_takeover";
import * as m0013 from "./0013_list_pages";
import * as m0014 from "./0014_session_list";
import * as m0015 from "./0015_recording_consent";
import * as m0016 from "./0016_letter_release";
import * as m0017 from "./0017_transcript_versions";
import * as m0018 from "./0018_user_vocabulary";
import * as m0019 from "./0019_letter_confirmations";
import * as m0021 from "./0021_letter_regeneration";
import * as m0022 from "./0022_letter_citations";
import * as m0023 from "./0023_letterheads";
import * as m0024 from "./0024_letter_export_details";
import * as m0025 from "./0025_change_notices";

// Static imports: kysely's FileMigrationProvider cannot import .ts under plain
// Node (STACK-NOTES pitfall 5). Append new migrations here, in order.
export const migrations: Record<string, Migration> = {
  "0001_create_foundation": m0001,
  "0002_create_templates": m0002,
  "0003_recording_uploads": m0003,
  "0004_multipart_uploads": m0004,
  "0005_transcription": m0005,
  "0006_letters": m0006,
  "0007_live_sessions": m0007,
  "0008_chat": m0008,
  "0009_admin": m0009,
  "0010_account_purges": m0010,
  "0011_audio_retention": m0011,
  "0012_live_takeover": m0012,
  "0013_list_pages": m0013,
  "0014_session_list": m0014,
  "0015_recording_consent": m0015,
  "0016_letter_release": m0016,
  "0017_transcript_versions": m0017,
  "0018_user_vocabulary": m0018,
  "0019_letter_confirmations": m0019,
  "0021_letter_regeneration": m0021,
  "0022_letter_citations": m0022,
  "0023_letterheads": m0023,
  "0024_letter_export_details": m0024,
  "0025_change_notices": m0025,
};
