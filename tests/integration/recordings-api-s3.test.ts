import { recordingsApiSuite } from "./recordings-suite";

// The same contract against S3-compatible storage (s3rver).
recordingsApiSuite("s3");
