import { multipartSuite } from "./multipart-suite";

// The same contract against S3-compatible storage (s3rver, with the ListParts and Abort calls it lacks).
multipartSuite("s3");
