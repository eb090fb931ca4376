// A SQLite VFS over the default one that fails on command, for tests of store failures: a full
// disk or an I/O error on write (SQLITE_FULL, SQLITE_IOERR_WRITE), another writer holding the
// WAL write lock (SQLITE_BUSY), a read-only file system (writes refused, no -shm can be made).
// install() makes it SQLite's default VFS for the whole test process, so the product's own
// Store::open goes through it unchanged. Its xSleep returns at once, so SQLite's busy timeout
// runs out without waiting: a lock that stays held fails deterministically and fast.
#pragma once
#include <sqlite3.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

namespace wattlab::test {

class FaultVfs {
 public:
  // SQLITE_OK: writes pass; otherwise xWrite, xTruncate and xSync return this code.
  std::atomic<int> write_error{SQLITE_OK};
  // Taking the WAL write lock returns SQLITE_BUSY, as when another writer holds it.
  std::atomic<bool> write_lock_busy{false};
  // Files open read-only and no -wal or -shm file can be created, as on a read-only mount.
  std::atomic<bool> read_only_fs{false};
  // Calls refused so far (writes and locks).
  std::atomic<int> refused{0};

  static FaultVfs& install() {
    static FaultVfs* self = [] {
      auto* v = new FaultVfs();
      sqlite3_vfs* base = sqlite3_vfs_find(nullptr);
      v->base_ = base;
      v->vfs_ = *base;
      v->vfs_.szOsFile = static_cast<int>(sizeof(File)) + base->szOsFile;
      v->vfs_.zName = "wattlab-fault";
      v->vfs_.pAppData = v;
      v->vfs_.xOpen = &FaultVfs::open;
      v->vfs_.xSleep = [](sqlite3_vfs*, int us) { return us; };
      v->vfs_.pNext = nullptr;
      sqlite3_vfs_register(&v->vfs_, 1);
      return v;
    }();
    return *self;
  }
  void clear() {
    write_error = SQLITE_OK;
    write_lock_busy = false;
    read_only_fs = false;
  }

 private:
  struct File {
    sqlite3_file base;  // pMethods: ours
    FaultVfs* vfs;
    sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
  };
  static File* file(sqlite3_file* f) { return reinterpret_cast<File*>(f); }
  static sqlite3_file* real(sqlite3_file* f) { return file(f)->real(); }
  static FaultVfs& of(sqlite3_file* f) { return *file(f)->vfs; }
  int refuse(int code) {
    ++refused;
    return code;
  }

  static int open(sqlite3_vfs* vfs, const char* name, sqlite3_file* f, int flags, int* out_flags) {
    auto& self = *static_cast<FaultVfs*>(vfs->pAppData);
    File* ff = file(f);
    ff->base.pMethods = nullptr;
    ff->vfs = &self;
    if (self.read_only_fs) {
      if (flags & (SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL)) {
        int exists = 0;
        if (name != nullptr) self.base_->xAccess(self.base_, name, SQLITE_ACCESS_EXISTS, &exists);
        if (!exists) return self.refuse(SQLITE_CANTOPEN);
      }
      if (flags & SQLITE_OPEN_READWRITE) {  // the unix VFS falls back to read-only on EROFS
        flags = (flags & ~(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_READONLY;
      }
    }
    const int rc = self.base_->xOpen(self.base_, name, ff->real(), flags, out_flags);
    if (rc == SQLITE_OK && ff->real()->pMethods != nullptr) {
      std::call_once(self.methods_once_, [&] { self.fill_methods(*ff->real()->pMethods); });
      ff->base.pMethods = &self.methods_;
    }
    return rc;
  }

  // Our methods: the default VFS's, wrapped. Filled once, from the first file opened.
  void fill_methods(const sqlite3_io_methods& base_methods) {
    auto& self = *this;
    {
      self.methods_ = base_methods;
      self.methods_.xClose = [](sqlite3_file* x) {
        const int r = real(x)->pMethods->xClose(real(x));
        x->pMethods = nullptr;
        return r;
      };
      self.methods_.xRead = [](sqlite3_file* x, void* b, int n, sqlite3_int64 o) {
        return real(x)->pMethods->xRead(real(x), b, n, o);
      };
      self.methods_.xWrite = [](sqlite3_file* x, const void* b, int n, sqlite3_int64 o) {
        if (const int e = of(x).write_error.load(); e != SQLITE_OK) return of(x).refuse(e);
        return real(x)->pMethods->xWrite(real(x), b, n, o);
      };
      self.methods_.xTruncate = [](sqlite3_file* x, sqlite3_int64 n) {
        if (const int e = of(x).write_error.load(); e != SQLITE_OK) return of(x).refuse(e);
        return real(x)->pMethods->xTruncate(real(x), n);
      };
      self.methods_.xSync = [](sqlite3_file* x, int fl) {
        if (const int e = of(x).write_error.load(); e != SQLITE_OK) return of(x).refuse(e);
        return real(x)->pMethods->xSync(real(x), fl);
      };
      self.methods_.xFileSize = [](sqlite3_file* x, sqlite3_int64* n) { return real(x)->pMethods->xFileSize(real(x), n); };
      self.methods_.xLock = [](sqlite3_file* x, int l) { return real(x)->pMethods->xLock(real(x), l); };
      self.methods_.xUnlock = [](sqlite3_file* x, int l) { return real(x)->pMethods->xUnlock(real(x), l); };
      self.methods_.xCheckReservedLock = [](sqlite3_file* x, int* r) {
        return real(x)->pMethods->xCheckReservedLock(real(x), r);
      };
      self.methods_.xFileControl = [](sqlite3_file* x, int op, void* a) {
        return real(x)->pMethods->xFileControl(real(x), op, a);
      };
      self.methods_.xSectorSize = [](sqlite3_file* x) { return real(x)->pMethods->xSectorSize(real(x)); };
      self.methods_.xDeviceCharacteristics = [](sqlite3_file* x) {
        return real(x)->pMethods->xDeviceCharacteristics(real(x));
      };
      if (self.methods_.iVersion >= 2) {
        self.methods_.xShmMap = [](sqlite3_file* x, int pg, int sz, int extend, void volatile** p) {
          // On a read-only mount the -shm file cannot be made: the unix VFS says SQLITE_CANTOPEN.
          if (of(x).read_only_fs) return of(x).refuse(SQLITE_CANTOPEN);
          return real(x)->pMethods->xShmMap(real(x), pg, sz, extend, p);
        };
        self.methods_.xShmLock = [](sqlite3_file* x, int offset, int n, int fl) {
          // Offset 0 is the WAL write lock; only taking it is refused.
          if (of(x).write_lock_busy && offset == 0 && (fl & SQLITE_SHM_LOCK) && (fl & SQLITE_SHM_EXCLUSIVE))
            return of(x).refuse(SQLITE_BUSY);
          return real(x)->pMethods->xShmLock(real(x), offset, n, fl);
        };
        self.methods_.xShmBarrier = [](sqlite3_file* x) { real(x)->pMethods->xShmBarrier(real(x)); };
        self.methods_.xShmUnmap = [](sqlite3_file* x, int d) { return real(x)->pMethods->xShmUnmap(real(x), d); };
      }
      if (self.methods_.iVersion >= 3) {
        self.methods_.xFetch = [](sqlite3_file* x, sqlite3_int64 o, int n, void** p) {
          return real(x)->pMethods->xFetch(real(x), o, n, p);
        };
        self.methods_.xUnfetch = [](sqlite3_file* x, sqlite3_int64 o, void* p) {
          return real(x)->pMethods->xUnfetch(real(x), o, p);
        };
      }
    }
  }

  sqlite3_vfs* base_ = nullptr;
  std::once_flag methods_once_;
  sqlite3_vfs vfs_{};
  sqlite3_io_methods methods_{};  // one table: every file of the default VFS has the same methods
};

}  // namespace wattlab::test
