// A small RAII wrapper over the HDF5 C API: each C call is wrapped once and throws an
// hdf5 error carrying HDF5's own error stack. Used by the launcher's writer and by
// ringscale-stats' reader; it links no MPI.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ringscale::h5 {

/// Throw an hdf5 error with HDF5's error stack when `status` is negative; returns `status`.
hid_t check(hid_t status, const char* call, const char* file, int line);

#define RINGSCALE_H5_CALL(expr) ::ringscale::h5::check((expr), #expr, __FILE__, __LINE__)

/// Silence HDF5's automatic error printing (we report errors ourselves). Idempotent.
void quiet_errors();

class handle;

/// Open attribute `name` of object `obj` for reading one value: throws (hdf5 error naming
/// the attribute and its shape) unless its dataspace is scalar.
handle open_scalar_attr(hid_t obj, const std::string& name);

/// "[2, 2]", "scalar" or "empty (null dataspace)": a dataspace's shape, for messages.
std::string describe_space(hid_t space);

/// A move-only owner of one hid_t and the function that closes it.
class handle {
  public:
    handle() = default;
    handle(hid_t id, herr_t (*close)(hid_t)) : m_id(id), m_close(close) {}
    handle(handle&& other) noexcept { swap(other); }
    handle& operator=(handle&& other) noexcept {
        handle tmp(std::move(other));
        swap(tmp);
        return *this;
    }
    handle(const handle&) = delete;
    handle& operator=(const handle&) = delete;
    ~handle() {
        if (m_id >= 0 && m_close)
            m_close(m_id);
    }
    hid_t id() const { return m_id; }
    bool valid() const { return m_id >= 0; }

  private:
    void swap(handle& o) noexcept {
        std::swap(m_id, o.m_id);
        std::swap(m_close, o.m_close);
    }
    hid_t m_id = -1;
    herr_t (*m_close)(hid_t) = nullptr;
};

/// Kind of a stored attribute, for readers that print attributes generically.
enum class attr_type { string, integer, floating, other };

/// What a dataset's header declares, read before any of its data (group::inspect).
struct dataset_info {
    H5T_class_t type_class = H5T_NO_CLASS; ///< H5T_INTEGER, H5T_FLOAT, H5T_STRING, ...
    std::vector<hsize_t> dims;             ///< empty for a scalar
    std::uint64_t points = 0;              ///< elements (1 for a scalar), saturating
};

/// The longest fixed-length string attribute read (the writer's are a few hundred bytes).
inline constexpr std::size_t max_attr_string_bytes = 1 << 20;

/// Anything that carries attributes: a file's root, a group or a dataset.
class object {
  public:
    explicit object(handle h) : m_h(std::move(h)) {}
    hid_t id() const { return m_h.id(); }

    void set_attr(const std::string& name, const std::string& value) const;
    void set_attr(const std::string& name, const char* value) const {
        set_attr(name, std::string(value));
    }
    void set_attr(const std::string& name, std::int64_t value) const;
    void set_attr(const std::string& name, int value) const {
        set_attr(name, static_cast<std::int64_t>(value));
    }
    void set_attr(const std::string& name, double value) const;

    // Readers of one attribute: each refuses (hdf5 error naming the attribute) an attribute
    // that is not a scalar, so an array written where a value belongs is never read into
    // one value's memory, and one of another class (attr_int: integer; attr_double: integer
    // or float; attr_string: string) rather than converting it.
    bool has_attr(const std::string& name) const;
    std::vector<std::string> attr_names() const;
    attr_type attr_kind(const std::string& name) const;
    std::string attr_string(const std::string& name) const;
    std::int64_t attr_int(const std::string& name) const;
    double attr_double(const std::string& name) const;
    /// Any scalar attribute rendered as text (numbers with full precision).
    std::string attr_as_text(const std::string& name) const;

  private:
    handle m_h;
};

/// Element types we store in datasets.
template <class T>
hid_t native_type();

/// A group (or a file's root group).
class group : public object {
  public:
    using object::object;

    group create_group(const std::string& name) const;
    group open_group(const std::string& name) const;
    bool exists(const std::string& name) const;
    /// Names of the links in this group, in name order.
    std::vector<std::string> children() const;

    /// Write a new dataset of `dims` (row-major) from `data`.
    template <class T>
    void write(const std::string& name, const std::vector<T>& data,
               const std::vector<hsize_t>& dims) const;
    void write_strings(const std::string& name, const std::vector<std::string>& values) const;
    void write_string(const std::string& name, const std::string& value) const;

    /// A reader's own test of a dataset's header (its shape), run before any data is read;
    /// it throws to refuse.
    using header_check = std::function<void(const dataset_info&)>;
    /// Read a whole dataset, converting to T; `dims` receives its shape when given. Throws
    /// (allocating nothing) when the declared shape needs more than `max_bytes` as T, so a
    /// damaged header cannot make a reader allocate gigabytes for a small file, when it is
    /// not an integer or float dataset, when `check` refuses its header, and for everything
    /// inspect() refuses. The dataset is opened once.
    template <class T>
    std::vector<T> read(const std::string& name, std::vector<hsize_t>* dims = nullptr,
                        std::uint64_t max_bytes = UINT64_MAX, const header_check& check = {}) const;
    /// A string dataset; throws when it is not one or declares more than `max_points`.
    std::vector<std::string> read_strings(const std::string& name,
                                          std::uint64_t max_points = UINT64_MAX) const;
    /// A string dataset of exactly one element (scalar or [1]).
    std::string read_string(const std::string& name) const;
    /// The header of dataset `name`. Throws (hdf5 error naming it) when `name` is a soft or
    /// external link, or its data would be read from outside this file (external storage,
    /// a virtual dataset): a file must not make a reader open other files or devices.
    dataset_info inspect(const std::string& name) const;
    /// inspect()'s checks, the dataset left open: its header in `info`.
    handle open_checked(const std::string& name, dataset_info& info) const;
    /// Throws unless `name` is a hard link in this group (open_group, read and
    /// object_address call it): a soft or external link is never followed.
    void require_hard_link(const std::string& name) const;
    /// The file address of the object `name` links to: two links to one object (hard links)
    /// give the same address.
    std::uint64_t object_address(const std::string& name) const;
};

/// An HDF5 file. Move-only; closes on destruction.
class file {
  public:
    /// Create (truncate) a file for writing; with `exclusive`, fail if `path` exists (two
    /// writers can then never share a file).
    static file create(const std::string& path, bool exclusive = false);
    /// Open an existing file read-only; throws hdf5 error naming the path if it cannot.
    static file open_read(const std::string& path);

    group root() const;
    void flush() const;
    /// Delete the file and close it, for a file that cannot be completed (a full disk): its
    /// storage is released at once. HDF5 1.10 cannot close a file whose flush failed; such a
    /// file stays open inside HDF5 until the process ends (its exit handler may then crash:
    /// a process that discards a file should end with _exit, as MPI_Abort does). Never throws.
    void discard();
    const std::string& path() const { return m_path; }

  private:
    file(handle h, std::string path) : m_h(std::move(h)), m_path(std::move(path)) {}
    handle m_h;
    std::string m_path;
};

} // namespace ringscale::h5
