import { badFilesApiSuite } from "./bad-files-api-suite";

// The same hostile files against S3-compatible storage (s3rver).
badFilesApiSuite("s3");
