/// The index database's schema, as numbered migrations applied in order (`PRAGMA user_version`).
enum Schema {
    /// Searched columns, in `AttributeSchema.searched` order, with their bm25 weights
    /// (title above everything, descriptions and body text lowest).
    static let ftsWeights = "10.0, 8.0, 5.0, 2.0, 1.0, 5.0, 3.0"

    static let migrations: [String] = [
        // 1: items with generations, full-text index, request queue, run history.
        """
        CREATE TABLE bundles(
            key TEXT PRIMARY KEY,
            identifier TEXT NOT NULL,
            live_gen INTEGER NOT NULL DEFAULT 0,
            version TEXT,
            fingerprint TEXT,
            first_seen REAL,
            last_seen REAL,
            missing_since REAL
        );
        CREATE TABLE items(
            id INTEGER PRIMARY KEY,
            bundle TEXT NOT NULL,
            gen INTEGER NOT NULL,
            uid TEXT NOT NULL,
            domain TEXT,
            expires REAL,
            attributes TEXT NOT NULL,
            UNIQUE(bundle, gen, uid)
        );
        CREATE INDEX items_domain ON items(bundle, gen, domain) WHERE domain IS NOT NULL;
        CREATE INDEX items_expires ON items(expires) WHERE expires IS NOT NULL;
        CREATE VIRTUAL TABLE items_fts USING fts5(
            title, displayName, alternateNames, contentDescription, textContent, keywords, authors,
            tokenize = 'unicode61 remove_diacritics 2',
            prefix = '2 3'
        );
        CREATE TABLE requests(
            id INTEGER PRIMARY KEY,
            bundle TEXT NOT NULL,
            bundle_identifier TEXT NOT NULL,
            kind TEXT NOT NULL,
            identifiers TEXT,
            reason TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending',
            attempts INTEGER NOT NULL DEFAULT 0,
            max_attempts INTEGER NOT NULL DEFAULT 5,
            next_attempt REAL NOT NULL,
            last_error TEXT,
            client_state TEXT,
            created REAL NOT NULL,
            updated REAL NOT NULL
        );
        CREATE INDEX requests_due ON requests(state, next_attempt);
        CREATE INDEX requests_bundle ON requests(bundle, state);
        CREATE TABLE runs(
            id INTEGER PRIMARY KEY,
            request_id INTEGER,
            bundle TEXT NOT NULL,
            kind TEXT NOT NULL,
            reason TEXT NOT NULL,
            started REAL NOT NULL,
            ended REAL NOT NULL,
            outcome TEXT NOT NULL,
            put INTEGER NOT NULL DEFAULT 0,
            deleted INTEGER NOT NULL DEFAULT 0,
            rejected INTEGER NOT NULL DEFAULT 0,
            error TEXT
        );
        CREATE INDEX runs_bundle ON runs(bundle, id);
        """,
        // 2: the expiration an item's refresh was last asked for (so it is asked once per expiration).
        """
        ALTER TABLE items ADD COLUMN refresh_asked_for REAL;
        """,
    ]
}
