#include "cg_inject/object_catalog.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "cg_inject/diagnostics.h"
#include "elf/object_image_stubs.h"

namespace cg_inject {
namespace {

/// A temporary copy of the test binary (a PIE) with e_type ET_EXEC, or "" when it cannot be
/// made; the caller removes it.
std::string FixedAddressCopyOfSelf() {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() <= 64) return "";
  bytes[16] = 2;
  bytes[17] = 0;
  char path[] = "/tmp/cg_inject_fixed_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return "";
  const bool written = write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size());
  close(fd);
  if (!written) {
    unlink(path);
    return "";
  }
  return path;
}

TEST(ObjectCatalogTest, OpensEachObjectOnce) {
  ObjectCatalog catalog;
  const ObjectImage* first = catalog.Lookup("/proc/self/exe");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->path(), "/proc/self/exe");
  EXPECT_EQ(catalog.Lookup("/proc/self/exe"), first);
  EXPECT_EQ(catalog.opened(), 1);
  EXPECT_TRUE(catalog.absent().empty());
}

TEST(ObjectCatalogTest, MissingObjectIsCountedAndWarnedOnce) {
  Diagnostics diagnostics;
  ObjectCatalog catalog({}, &diagnostics);
  const std::string missing = "/nonexistent/cg-inject/libgone.so";
  EXPECT_EQ(catalog.Lookup(missing), nullptr);
  EXPECT_EQ(catalog.Lookup(missing), nullptr);
  ASSERT_EQ(catalog.absent().size(), 1u);
  EXPECT_EQ(catalog.absent()[0].path, missing);
  EXPECT_EQ(catalog.absent()[0].reason, strerror(ENOENT));
  EXPECT_EQ(catalog.opened(), 0);
  ASSERT_EQ(diagnostics.kinds().size(), 1u);
  EXPECT_EQ(diagnostics.kinds()[0].kind, "elf: object absent");
  EXPECT_EQ(diagnostics.kinds()[0].count, 1);
  ASSERT_EQ(diagnostics.kinds()[0].first_messages.size(), 1u);
  EXPECT_EQ(diagnostics.kinds()[0].first_messages[0], missing + ": " + strerror(ENOENT));
}

TEST(ObjectCatalogTest, NonPathNamesAreNeitherObjectsNorAbsent) {
  Diagnostics diagnostics;
  ObjectCatalog catalog({}, &diagnostics);
  EXPECT_EQ(catalog.Lookup("???"), nullptr);
  EXPECT_EQ(catalog.Lookup("[vdso]"), nullptr);
  EXPECT_EQ(catalog.Lookup(""), nullptr);
  EXPECT_TRUE(catalog.absent().empty());
  EXPECT_EQ(diagnostics.total(), 0);
}

TEST(ObjectCatalogTest, RootIsPrependedButNotReported) {
  if (access("/bin/true", R_OK) != 0) GTEST_SKIP() << "/bin/true is not readable";
  // /proc/self/root is this process's root directory, so the prefixed path is the same file.
  ObjectCatalog rooted(ObjectCatalogOptions{"/proc/self/root"});
  const ObjectImage* image = rooted.Lookup("/bin/true");
  ASSERT_NE(image, nullptr);
  EXPECT_EQ(image->path(), "/bin/true");

  Diagnostics diagnostics;
  ObjectCatalog elsewhere(ObjectCatalogOptions{"/nonexistent-root"}, &diagnostics);
  EXPECT_EQ(elsewhere.Lookup("/bin/true"), nullptr);
  ASSERT_EQ(elsewhere.absent().size(), 1u);
  EXPECT_EQ(elsewhere.absent()[0].path, "/bin/true");
  ASSERT_EQ(diagnostics.kinds().size(), 1u);
  EXPECT_EQ(diagnostics.kinds()[0].first_messages.at(0),
            std::string("/nonexistent-root/bin/true: ") + strerror(ENOENT));
}

TEST(ObjectCatalogTest, AddedImageIsFoundWithoutTouchingDisk) {
  ObjectCatalog catalog;
  const ObjectImage* added = catalog.Add(
      "/nonexistent/app", ObjectImage("/nonexistent/app", false, {{0x400000, 0x1000, true}},
                                      {{0x400100, 0x20, "main"}}));
  EXPECT_EQ(catalog.Lookup("/nonexistent/app"), added);
  ASSERT_NE(added->LookupSymbol(0x400110), nullptr);
  EXPECT_EQ(added->LookupSymbol(0x400110)->name, "main");
  EXPECT_TRUE(catalog.absent().empty());
  EXPECT_EQ(catalog.opened(), 0);

  // Replacing an absent entry makes it present.
  EXPECT_EQ(catalog.Lookup("/nonexistent/lib.so"), nullptr);
  const ObjectImage* replaced =
      catalog.Add("/nonexistent/lib.so", ObjectImage("/nonexistent/lib.so", true, {}, {}));
  EXPECT_EQ(catalog.Lookup("/nonexistent/lib.so"), replaced);
}

TEST(ObjectCatalogTest, FixedAddressesAreToldFromTheHeaderAlone) {
  ObjectCatalog catalog;
  // The test binary is a PIE (ET_DYN): no fixed addresses, and LIEF never opened it.
  EXPECT_FALSE(catalog.MayHaveFixedAddresses("/proc/self/exe"));
  EXPECT_FALSE(catalog.MayHaveFixedAddresses("/nonexistent/cg-inject/gone"));
  EXPECT_FALSE(catalog.MayHaveFixedAddresses("???"));
  EXPECT_EQ(catalog.opened(), 0);
  EXPECT_TRUE(catalog.absent().empty());

  const std::string path = FixedAddressCopyOfSelf();
  ASSERT_FALSE(path.empty());
  EXPECT_TRUE(catalog.MayHaveFixedAddresses(path));
  EXPECT_EQ(catalog.opened(), 0);
  unlink(path.c_str());
  // Answers are remembered: the file is gone now.
  EXPECT_TRUE(catalog.MayHaveFixedAddresses(path));
}

// The program is read while the symbol sources load (Preload): Lookup and Stubs then take what
// was read, with nothing said until they are asked, and then what they would have said.
TEST(ObjectCatalogTest, PreloadedObjectsAreTakenAndSaidWhenAsked) {
  // Lookup reads an ET_EXEC object whole.
  const std::string path = FixedAddressCopyOfSelf();
  ASSERT_FALSE(path.empty());
  const std::string missing = "/nonexistent/cg-inject/gone";

  Diagnostics diagnostics;
  ObjectCatalog catalog({}, &diagnostics);
  catalog.Preload(path);
  catalog.Preload(missing);
  catalog.Preload("???");
  EXPECT_EQ(diagnostics.total(), 0);
  EXPECT_EQ(catalog.opened(), 0);
  EXPECT_TRUE(catalog.absent().empty());
  unlink(path.c_str());  // what the catalog finds now, it read before

  const ObjectImage* image = catalog.Lookup(path);
  ASSERT_NE(image, nullptr);
  EXPECT_FALSE(image->is_pie());
  EXPECT_FALSE(image->symbols().empty());
  EXPECT_EQ(catalog.Lookup(path), image);
  EXPECT_EQ(catalog.opened(), 1);
  const ObjectStubs* stubs = catalog.Stubs(path);
  ASSERT_NE(stubs, nullptr);
  EXPECT_TRUE(stubs->fixed_addresses);
  EXPECT_FALSE(stubs->code.empty());
  EXPECT_EQ(diagnostics.total(), 0);

  EXPECT_EQ(catalog.Lookup(missing), nullptr);
  ASSERT_EQ(diagnostics.kinds().size(), 1u);
  EXPECT_EQ(diagnostics.kinds()[0].kind, "elf: object absent");
  EXPECT_EQ(diagnostics.kinds()[0].count, 1);
  ASSERT_EQ(catalog.absent().size(), 1u);
  EXPECT_EQ(catalog.absent()[0].path, missing);
}

}  // namespace
}  // namespace cg_inject
