// Import this module first (`import 'reindex-extension/protect'`) to protect stdout before any
// other module runs, for extensions whose imports print at load time. `run()` protects stdout
// by itself; this only moves that earlier.
import { protectStdout } from './stdout-protection.js';
protectStdout();
