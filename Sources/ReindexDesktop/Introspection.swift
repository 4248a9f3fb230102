// D-Bus desktop search (sd-bus) exists on Linux only.
#if os(Linux)
import ReindexStore

/// The introspection document of an exported object (what `gdbus introspect` and `gdbus call`
/// read to learn the argument types), and the icon shown beside a result.
enum Introspection {
    static func document(_ interfaces: String) -> String {
        """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect">
              <arg type="s" name="xml_data" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
            <method name="GetMachineId">
              <arg type="s" name="machine_uuid" direction="out"/>
            </method>
          </interface>
        \(interfaces)
        </node>

        """
    }

    /// A freedesktop icon-theme name for the item's kind (its contentType's top-level type).
    static func iconName(for item: SearchResult) -> String {
        let type = item.attributes["contentType"]?.stringValue ?? ""
        if type.hasPrefix("image") || type.hasPrefix("public.image") { return "image-x-generic" }
        if type.hasPrefix("audio") || type.hasPrefix("public.audio") { return "audio-x-generic" }
        if type.hasPrefix("video") || type.hasPrefix("public.movie") { return "video-x-generic" }
        if type.contains("contact") || type.contains("vcard") { return "x-office-address-book" }
        if type.contains("calendar") || type.contains("event") { return "x-office-calendar" }
        return "text-x-generic"
    }
}
#endif
