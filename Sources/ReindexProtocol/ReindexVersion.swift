public enum ReindexVersion { public static let string = "0.1.0"; public static let protocolVersions = [1] }
